"""Minimal pairs on the model pages: a second sentence that differs from the first in a word or two, run through the
same model, and what moved between them (``attn_core.interpret.minimal_pair``).

Real model is the main place (``model_section``): the chosen head's two maps side by side on the tokens the two
sentences share, B − A, where the changed word's attention went, and every head ranked by how much it moved. Inside
the model offers the same section (``inside_section``), Explain sets what moved beside what matters
(``explain_section``), Next token shows the two next-token predictions and the heads whose ablation closes the gap
between them (``next_token_section``). On every page the section is folded away until opened (a link that names a
pair opens it): a class opening a page asks for no pair job and draws none of its charts.

The controls are links' (``explorer.controls``): ``pair`` (a curated pair's id, or ``own``: the page's sentence as A
and ``pair_b`` as B) and ``pair_head`` (``layer:head``, the most moved head unless chosen). The pairs offered are
those written for this kind of model, the UI language's first. Both runs (and a decoder's ablations) are background
jobs (``explorer.jobs``: ``minimal_pair``, ``minimal_pair_ablation``) keyed by plain values (the model's name and the
two sentences) and shared by every session; a rerun only reads their plain results.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from attn_core import AttentionConfigError
from attn_core import models as pt
from attn_core.interpret import minimal_pair as mp
from attn_core.models.labels import visible
from explorer import charts
from explorer import figures as fig
from explorer.base import session, tables, widgets
from explorer.base.i18n import error_text, lang, t
from explorer.base.safe import md, md_t, plot
from explorer.charts.views import a_b_maps, chart
from explorer.controls import PAGE, draw, forget
from explorer.jobs import waiting
from explorer.model import real

OWN = "own"  # ``pair=own``: the page's sentence as A, ``pair_b`` as B
PAIR, PAIR_B, PAIR_HEAD = PAGE["pair"], PAGE["pair_b"], PAGE["pair_head"]
STILL = 0.005  # a query whose attention moved less than this (total variation) "barely moved"
TOP = 10  # heads listed on Explain


# --- the background jobs ---------------------------------------------------------------------------------------


def request(name: str, a: str, b: str) -> tuple[str, dict]:
    """Both sentences through the offered model ``name`` (``attn_core.heavy``'s ``minimal_pair``)."""
    return "minimal_pair", {"model": name, "a": a, "b": b}


def ablation_request(name: str, a: str, b: str) -> tuple[str, dict]:
    """A decoder's heads ablated one at a time in both runs (``minimal_pair_ablation``)."""
    return "minimal_pair_ablation", {"model": name, "a": a, "b": b}


# --- the pairs offered -----------------------------------------------------------------------------------------


def offered(causal: bool, language: str) -> list[dict]:
    """The curated pairs written for this kind of model, those in ``language`` first (the file's order kept)."""
    pairs = mp.curated("decoder" if causal else "encoder")
    return sorted(pairs, key=lambda p: p["language"] != language)


def checked(m, a: str, b: str) -> None:
    """What the job would refuse, refused here from the tokens alone (cheap): too long, or the same tokens."""
    ea, eb = mp.encoded(m, a, "a"), mp.encoded(m, b, "b")
    if list(ea.ids[: ea.n_real]) == list(eb.ids[: eb.n_real]):
        raise AttentionConfigError("b", "pair_identical", model=m.name)


def _link_refused(ids: list[str], causal: bool) -> None:
    """A link's ``pair`` that is not offered here: dropped (never echoed), the page says why and goes on."""
    raw = session.url(PAIR.name)
    if raw is None or raw in ids or raw == OWN:
        return
    session.drop_url(PAIR.name)
    known = {p["id"]: p for p in mp.curated()}
    if raw in known:  # a pair written for the other kind of model
        kind = t("mp.kind_model.decoder") if causal else t("mp.kind_model.encoder")
        st.warning(t("mp.unsuited", kind=kind), icon=":material/link_off:")
    else:
        st.warning(t("mp.unknown_pair", n=len(ids)), icon=":material/link_off:")


def _pair_label(pair: dict | None, language: str) -> str:
    if pair is None:
        return t("mp.own", language=language)
    kind = pair["kind"]
    return f"{t(f'mp.kind.{kind}', language=language)} · {pair['language']} · {pair['b']}"


def _new_pair() -> None:
    """A new pair: its head picker starts again at its most moved head."""
    forget(PAIR_HEAD)


def choose(container, m, sentence: str) -> tuple[str, str, str] | None:
    """The pair picker (and, for ``own``, sentence B's box): (the pair's id or ``own``, sentence A, sentence B), or
    None when they cannot be compared (said on the page in the UI's language)."""
    language = lang()  # the labels' language, fixed when drawn (the widget formats them after the run too)
    pairs = offered(m.causal, language)
    by_id = {p["id"]: p for p in pairs}
    ids = list(by_id)
    _link_refused(ids, m.causal)
    own_link = session.url(PAIR_B.name) is not None and session.url(PAIR.name) is None  # ?pair_b= alone: own
    default = OWN if own_link or not ids else ids[0]
    chosen = draw(
        PAIR,
        container,
        options=[*ids, OWN],
        default=default,
        format_func=lambda i: _pair_label(by_id.get(i), language),
        on_change=_new_pair,
    )
    if chosen == OWN:
        container.caption(t("mp.own_a", a=md(sentence)))
        b = draw(PAIR_B, container, default=sentence, on_change=_new_pair)
        a = sentence
    else:
        forget(PAIR_B)
        a, b = by_id[chosen]["a"], by_id[chosen]["b"]
        container.markdown(md_t("mp.shown_pair", a=a, b=b))
    if not b.strip():
        container.info(t("mp.type_b"), icon=":material/edit:")
        return None
    try:
        checked(m, a, b)
    except AttentionConfigError as err:
        message, fix = error_text(err)
        if err.code == "pair_identical" and a == b:  # the box as it opened: the page's sentence, unchanged
            container.info(t("mp.change_a_word"), icon=":material/edit:")
        else:
            container.warning(t("invalid", msg=md(f"{message} {fix}")), icon=":material/warning:")
        return None
    return chosen, a, b


# --- reading a result (plain values in and out: what a rerun does) ---------------------------------------------


def head_name(layer: int, head: int) -> str:
    return f"{layer}:{head}"


def parse_head(name: str) -> tuple[int, int]:
    layer, head = name.split(":")
    return int(layer), int(head)


def _mean_row(w: list[list[float]], rows: list[int]) -> list[float]:
    return [sum(w[r][k] for r in rows) / len(rows) for k in range(len(w[0]))]


def query_weights(result: dict, layer: int, head: int, q: int | None = None) -> dict:
    """Where query ``q`` (the default one) of head layer:head attends in A and in B, on the shared keys with the
    changed keys lumped last (as the engine measures it): ``a``, ``b`` (S + 1 weights), ``moved`` (their total
    variation: the engine's), ``src`` and ``dst`` (the key that lost most and the one that gained most; S means
    the changed keys)."""
    q = result["query"] if q is None else q
    rows = result["queries"][q]
    ra = _mean_row(mp.head_map(result, "a", layer, head), rows["a"])
    rb = _mean_row(mp.head_map(result, "b", layer, head), rows["b"])
    a = [ra[i] for i, _ in result["shared"]]
    b = [rb[j] for _, j in result["shared"]]
    a.append(max(0.0, sum(ra) - sum(a)))
    b.append(max(0.0, sum(rb) - sum(b)))
    delta = [y - x for x, y in zip(a, b, strict=True)]
    return {
        "query": q,
        "a": a,
        "b": b,
        "moved": 0.5 * sum(abs(d) for d in delta),
        "src": min(range(len(delta)), key=lambda k: (delta[k], k)),
        "dst": max(range(len(delta)), key=lambda k: (delta[k], -k)),
    }


def span_text(tok, ids: list[int], labels: list[str]) -> str:
    """A word made of tokens, as the page names it in a sentence: the tokens decoded together, the spaces around
    them left out and any inside seen (``models.labels``' rule: a character split over two tokens is whole again);
    where that leaves nothing whole (a lone space, half a character), the tokens' own labels side by side."""
    text = tok.decode(ids).strip()
    return visible(text) if text and "\ufffd" not in text else " ".join(labels)


def query_name(result: dict, q: int, tok) -> str:
    """'tired → wide' for a changed word, the token itself for a shared one or the last."""
    rows = result["queries"][q]
    side = {
        s: span_text(tok, [result[s]["ids"][i] for i in rows[s]], [result[s]["labels"][i] for i in rows[s]])
        for s in ("a", "b")
    }
    return side["a"] if side["a"] == side["b"] else f"{side['a']} → {side['b']}"


def key_names(result: dict) -> list[str]:
    """The shared keys' labels, then the changed keys' lump (the order of ``query_weights``)."""
    return [result["a"]["labels"][i] for i, _ in result["shared"]] + [t("mp.changed_keys")]


def words(result: dict, layer: int, head: int, tok) -> str:
    """One line of plain words: where head layer:head's attention from the changed word went."""
    w = query_weights(result, layer, head)
    names = key_names(result)
    facts = dict(head=head_name(layer, head), query=query_name(result, w["query"], tok), moved=f"{w['moved']:.2f}")
    if w["moved"] < STILL:
        return md_t("mp.words_still", **facts)
    s, d = w["src"], w["dst"]
    facts |= dict(src=names[s], src_a=f"{w['a'][s]:.2f}", src_b=f"{w['b'][s]:.2f}")
    facts |= dict(dst=names[d], dst_a=f"{w['a'][d]:.2f}", dst_b=f"{w['b'][d]:.2f}")
    return md_t("mp.words", **facts)


def ranking_rows(ranking: list[dict]) -> dict:
    """Every head, most moved first: its rank, its name, how much moved (3 decimals)."""
    return {
        t("mp.col_rank"): list(range(1, len(ranking) + 1)),
        t("mp.col_head"): [head_name(c["layer"], c["head"]) for c in ranking],
        t("mp.col_moved"): [round(c["moved"], 3) for c in ranking],
    }


def ablation_rows(ranking: list[dict]) -> dict:
    """Every head, the one whose ablation closes most of the gap first: the gap left, the share closed (%)."""
    return {
        t("mp.col_rank"): list(range(1, len(ranking) + 1)),
        t("mp.col_head"): [head_name(c["layer"], c["head"]) for c in ranking],
        t("mp.col_gap"): [round(c["gap"], 4) for c in ranking],
        t("mp.col_closed"): [round(100 * c["closed"], 1) for c in ranking],
    }


def closing_words(ab: dict) -> str:
    """The head whose ablation closes most of the gap, in a line (or that the two predictions are the same)."""
    if ab["identical"]:
        return t("mp.gap_none")
    best = ab["ranking"][0]
    facts = dict(head=head_name(best["layer"], best["head"]), share=f"{100 * best['closed']:.0f}")
    return md_t("mp.gap_closed", **facts, gap=f"{ab['gap']:.4f}", left=f"{best['gap']:.4f}")


# --- drawing ---------------------------------------------------------------------------------------------------


def _job(page: str, name: str, pair: tuple[str, str, str] | None, ablation: bool = False) -> dict:
    """This page's jobs for the pair (none when there is no pair to compare: the ones it watched are left)."""
    if pair is None:
        waiting.ask(page, {})
        return {}
    wanted = {"pair": request(name, pair[1], pair[2])}
    if ablation:
        wanted["ablation"] = ablation_request(name, pair[1], pair[2])
    return waiting.ask(page, wanted)


def head_picker(container, result: dict) -> tuple[int, int]:
    """The head (``pair_head``), every head offered most moved first; the most moved one unless chosen."""
    ranking = result["ranking"]
    moved = {head_name(c["layer"], c["head"]): c["moved"] for c in ranking}
    options = list(moved)
    language = lang()  # the labels' language, fixed when drawn (the widget formats them after the run too)
    chosen = draw(
        PAIR_HEAD,
        container,
        options=options,
        default=options[0],
        format_func=lambda h: t("mp.head_option", language=language, head=h, moved=f"{moved.get(h, 0.0):.2f}"),
    )
    return parse_head(chosen)


MAPS = (("a_shared", "mp.map_a"), ("b_shared", "mp.map_b"), ("diff", "mp.map_diff"))  # a head's maps, B − A last


def maps_ui(result: dict, layer: int, head: int, tok, key: str) -> None:
    """Where the changed word's attention went (A's bars beside B's), then the head's two maps on the shared tokens
    side by side and B − A."""
    st.markdown(words(result, layer, head, tok))
    w = query_weights(result, layer, head)
    keys = fig.labels(key_names(result))
    title = t("mp.query_title", head=head_name(layer, head), query=query_name(result, w["query"], tok))
    chart(charts.grouped_bars({"A": w["a"], "B": w["b"]}, keys, title=title), f"{key}_query")
    view = mp.head_view(result, layer, head)
    labels = fig.labels(view["labels"])
    maps = [(view[field], labels, t(title, head=head_name(layer, head)), field) for field, title in MAPS]
    a_b_maps(maps, key)
    st.caption(t("mp.maps_note", n=len(view["labels"])))


def ranking_ui(result: dict, key: str, top: int | None = None) -> None:
    st.markdown(f"**{t('mp.ranking')}**")
    st.caption(t("mp.ranking_note"))
    ranking = result["ranking"][:top] if top else result["ranking"]
    tables.dataframe(ranking_rows(ranking), hide_index=True)


def _model(name: str):
    m = real.model(name)  # loaded already: the page that calls this drew the model first
    if m is None:
        st.caption(t("rm_loading"))
    return m


def _folded(page: str, key: str, opened_by: tuple[str, ...] = (PAIR.name, PAIR_B.name)):
    """The section's fold (None while closed: nothing asked for, nothing drawn, so a class opening the page asks for
    no pair); open, a worker is started while the page is read (the pair is a background job)."""
    box = widgets.expander(st, t("mp.title"), key=key, opened_by=opened_by)
    if not box.open:
        waiting.ask(page, {})
        return None
    waiting.warm()
    return box


def model_section(name: str, sentence: str) -> None:
    """Real model's section, folded away until opened (a link that names a pair opens it): the pair, the head, its
    maps, every head ranked."""
    _full_section(name, sentence, "mp_model")


def inside_section(name: str, sentence: str) -> None:
    """Inside the model: the same section as Real model's."""
    _full_section(name, sentence, "mp_inside")


def _full_section(name: str, sentence: str, page: str) -> None:
    if (box := _folded(page, f"{page}_open", (PAIR.name, PAIR_B.name, PAIR_HEAD.name))) is not None:
        with box:
            st.caption(t("mp.intro"))
            full_view(name, sentence, page)


def full_view(name: str, sentence: str, page: str) -> None:
    m = _model(name)
    if m is None:
        waiting.ask(page, {})
        return
    pair = choose(st, m, sentence)
    jobs = _job(page, name, pair)
    if not jobs or not waiting.status(jobs["pair"]):
        return
    if m.causal and page != "mp_model":  # Inside on a decoder: the predictions and the heads that close their gap
        st.link_button(t("mp.to_next_token"), open_link("next_token", name, pair), icon=":material/arrow_forward:")
    result = jobs["pair"].result
    layer, head = head_picker(st, result)
    maps_ui(result, layer, head, m.tokenizer, page)
    ranking_ui(result, page)
    if result["next_token"] is not None:
        nxt = result["next_token"]
        facts = dict(a=md(nxt["top_a"]["label"]), b=md(nxt["top_b"]["label"]), gap=f"{nxt['gap']:.4f}")
        st.caption(t("mp.next_caption", **facts))


def open_link(page: str, name: str, pair: tuple[str, str, str]) -> str:
    """Another model page (its ``url_path``) on this pair: its model, its pair or sentence B."""
    chosen, _, b = pair
    query = {"model": name, PAIR.name: chosen} | ({PAIR_B.name: b} if chosen == OWN else {})
    return f"/{page}?" + urlencode(query)


def explain_section(name: str, sentence: str) -> None:
    """Explain: does the head whose attention moves most also matter? What moved, and on a decoder, beside it,
    the heads whose removal closes the gap between the two predictions."""
    if (box := _folded("mp_explain", "mp_explain_open")) is not None:
        with box:
            _explain_view(name, sentence)


def _explain_view(name: str, sentence: str) -> None:
    st.caption(t("mp.explain_intro"))
    m = _model(name)
    if m is None:
        waiting.ask("mp_explain", {})
        return
    pair = choose(st, m, sentence)
    jobs = _job("mp_explain", name, pair, ablation=m.causal)
    if not jobs:
        return
    st.link_button(t("mp.open_model"), open_link("model", name, pair), icon=":material/arrow_forward:")
    if not waiting.status(jobs["pair"]):
        return
    result = jobs["pair"].result
    top = result["ranking"][0]
    st.markdown(words(result, top["layer"], top["head"], m.tokenizer))
    if not m.causal:
        ranking_ui(result, "mp_explain", TOP)
        return
    left, right = st.columns(2)
    with left:
        ranking_ui(result, "mp_explain", TOP)
    with right:
        if waiting.status(jobs["ablation"]):
            ab = jobs["ablation"].result
            st.markdown(f"**{t('mp.ablation')}**")
            st.caption(t("mp.ablation_note"))
            tables.dataframe(ablation_rows(ab["ranking"][:TOP]), hide_index=True)
            if not ab["identical"]:
                order = [head_name(c["layer"], c["head"]) for c in ab["ranking"]]
                place = order.index(head_name(top["layer"], top["head"])) + 1
                st.markdown(md_t("mp.explain_place", head=head_name(top["layer"], top["head"]), k=place, n=len(order)))


def next_token_section(name: str, prompt: str) -> None:
    """Next token: both next-token distributions, their gap, and the heads whose ablation closes it (folded away until
    opened: a link that names a pair opens it)."""
    if (box := _folded("mp_next_token", "mp_nt_open")) is not None:
        with box:
            _next_token_view(name, prompt)


def _next_token_view(name: str, prompt: str) -> None:
    st.caption(t("mp.nt_intro"))
    m = _model(name)
    if m is None:
        waiting.ask("mp_next_token", {})
        return
    pair = choose(st, m, prompt)
    jobs = _job("mp_next_token", name, pair, ablation=True)
    if not jobs or not waiting.status(jobs["pair"]):
        return
    nxt = jobs["pair"].result["next_token"]
    top_a, top_b = nxt["top_a"], nxt["top_b"]
    facts = dict(a=top_a["label"], pa=f"{top_a['prob']:.2f}", b=top_b["label"], pb=f"{top_b['prob']:.2f}")
    st.markdown(md_t("mp.next_words", **facts, gap=f"{nxt['gap']:.4f}"))
    names = [plot(x) for x in pt.numbered([x["label"] for x in nxt["tokens"]])]
    series = {"A": [x["a"] for x in nxt["tokens"]], "B": [x["b"] for x in nxt["tokens"]]}
    chart(charts.grouped_bars(series, names, title=t("mp.next_title")), "mp_next")
    if not waiting.status(jobs["ablation"]):
        return
    ab = jobs["ablation"].result
    st.markdown(closing_words(ab))
    st.caption(t("mp.ablation_note"))
    tables.dataframe(ablation_rows(ab["ranking"]), hide_index=True)
