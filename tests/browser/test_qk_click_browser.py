"""The query-key map in Chromium: a click on a query's point makes it the selected query (the page's focus, in the
link too), and the map draws that query's attention row from it."""

import serve
from playwright.sync_api import expect
from test_browser import WAIT, settle


def query_points(chart) -> list[dict]:
    """The queries' points of the map in ``chart`` (the trace the figure's meta names), as page coordinates."""
    return chart.evaluate(
        """(el) => {
             const gd = el.querySelector('.js-plotly-plot');
             const curve = gd.layout.meta.queries_curve;
             const trace = el.querySelectorAll('.scatterlayer .trace')[curve];
             return Array.from(trace.querySelectorAll('path.point')).map((p) => {
               const r = p.getBoundingClientRect();
               return {x: r.x + r.width / 2, y: r.y + r.height / 2};
             });
           }"""
    )


def test_a_click_on_a_query_selects_it_and_the_link_follows(server, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1100})
    page = ctx.new_page()
    try:
        page.goto(f"{server}/steps?qk_colour=position&focus=1")  # a link naming the map's colour opens it
        chart = page.locator("[data-testid='stPlotlyChart']", has_text="Queries and keys as a map")
        expect(chart).to_be_visible(timeout=WAIT)
        settle(page)
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        points = query_points(chart)
        assert len(points) == 6  # "Life is short, eat dessert first"
        target = 4
        page.mouse.click(points[target]["x"], points[target]["y"])
        page.wait_for_function(f"location.search.includes('focus={target}')", polling=serve.POLL, timeout=WAIT)
        settle(page)
        assert f"focus={target}" in page.url
        chart = page.locator("[data-testid='stPlotlyChart']", has_text="Queries and keys as a map")
        selected = chart.evaluate(
            """(el) => {
                 const gd = el.querySelector('.js-plotly-plot');
                 const w = gd.data[gd.layout.meta.queries_curve].marker.line.width;  // the focus: outlined thick
                 return Array.isArray(w) ? w.indexOf(Math.max(...w)) : -1;
               }"""
        )
        assert selected == target  # the map draws the clicked query as the selected one, its row's lines from it
    finally:
        ctx.close()
