"""Whether a page works offline, as a classroom network may be: every request a page makes is recorded, any to
another host is refused at once (and fails the test that asked), and what the page links to (its icon, a script, a
style sheet, an image) is read from the page. Used by the offline check of pages loaded by their address
(test_offline_browser.py) and by the walk through every page that axe-core checks (test_axe.py)."""

from urllib.parse import urlsplit

LOCAL_HOSTS = {"127.0.0.1"}
INLINE = ("data:", "blob:", "about:")
LINKED = """() => [...document.querySelectorAll('link[href], script[src], img[src], source[src], iframe[src]')]
    .map(e => e.href || e.src)"""
ICON = "() => document.querySelector('link[rel~=icon]')?.href || ''"


def leaves(url: str) -> bool:
    """Whether a request to ``url`` goes to another machine (an inline image or script goes nowhere)."""
    if url.startswith(INLINE):
        return False
    return urlsplit(url).hostname not in LOCAL_HOSTS


class Requests:
    """Every request ``page`` makes from now on (its sockets too), those to another host refused at once instead of
    waited on; ``look`` reads what the page as drawn links to on another host, by the name it is given."""

    def __init__(self, page):
        self.seen: list[str] = []
        self.linked: dict[str, list[str]] = {}
        page.on("request", lambda request: self.seen.append(request.url))
        page.on("websocket", lambda socket: self.seen.append(socket.url))
        page.route("**/*", self._refuse)

    @staticmethod
    def _refuse(route) -> None:
        if leaves(route.request.url):
            route.abort()
        else:
            route.continue_()

    def look(self, page, name: str) -> None:
        self.linked[name] = [u for u in page.evaluate(LINKED) if leaves(u)]

    def outside(self) -> list[str]:
        return sorted({u for u in self.seen if leaves(u)})

    def linked_outside(self) -> dict[str, list[str]]:
        return {name: urls for name, urls in self.linked.items() if urls}

    def sockets(self) -> int:
        """The app's own sockets seen (the recording works: it saw the page's connection to the server)."""
        return len([u for u in self.seen if "/_stcore/stream" in u])
