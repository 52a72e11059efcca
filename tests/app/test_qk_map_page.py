"""Step by step's "Queries and keys as a map" under AppTest: nothing computed until opened; opened, its points are
the engine's map of the page's own trace (exact at d_k = 2, PCA otherwise, said which); the additive score is
said not to fit; both languages."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from tolerance import assert_close

from attn_core import run_trace
from attn_core.why import qk_map
from explorer.model import real
from explorer.steps.qk_view import OPEN_KEY

PAGE = "pages/1_steps.py"


def map_chart(at):
    found = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "chart_qk_map" in c.proto.id]
    return found[0] if found else None


def opened(at):
    at.session_state[OPEN_KEY] = True
    return at.run()


def test_the_map_is_drawn_only_once_opened(app):
    at = app(PAGE)
    assert map_chart(at) is None
    assert map_chart(opened(at)) is not None


def test_the_points_are_the_engines_map_of_the_pages_trace(app):
    at = opened(app(PAGE, query={"d_q": "2", "d_k": "2", "heads": "2", "head_steps": "1", "focus": "3"}))
    assert not at.exception, [e.value for e in at.exception]
    spec = map_chart(at)
    trace = run_trace(at.session_state["settings"])
    want = qk_map(trace.Q[1], trace.K[1], trace.scaled_scores[1], trace.mask)
    queries, keys = (next(d for d in spec["data"] if d.get("name") == n) for n in ("queries", "keys"))
    got_q = torch.tensor([queries["x"], queries["y"]]).T
    got_k = torch.tensor([keys["x"], keys["y"]]).T
    assert torch.allclose(got_q, want.queries, rtol=1e-5, atol=1e-6)
    assert torch.allclose(got_k, want.keys, rtol=1e-5, atol=1e-6)
    assert any("d_k = 2: the points are the vectors themselves" in c.value for c in at.caption)
    assert any(f"r = {want.correlation:.3f}" in c.value for c in at.caption)
    lines = [d for d in spec["data"] if d.get("mode") == "lines"]
    assert len(lines) == len(keys["x"])  # one line from the focus query to every key
    assert all(line["x"][0] == queries["x"][3] for line in lines)


def test_pca_is_said_with_the_share_it_keeps(app):
    at = opened(app(PAGE, query={"lang": "zh"}))
    spec = map_chart(at)
    assert spec is not None
    assert any("主成分" in c.value for c in at.caption)


def test_the_additive_score_is_said_not_to_fit(app):
    at = opened(app(PAGE, query={"score": "additive"}))
    assert not at.exception
    assert map_chart(at) is None
    assert any("additive score" in i.value for i in at.info)


MODEL = "pages/7_model.py"
SENTENCE = "The animal didn't cross the street because it was too tired"


def _model_map(app, **query):
    from explorer.steps.qk_view import MODEL_OPEN_KEY

    at = app(MODEL, query={"sentence": SENTENCE} | query)
    assert map_chart(at) is None  # nothing computed until opened
    at.session_state[MODEL_OPEN_KEY] = True
    return at.run()


def _model_map_opened_in_chinese(**query):
    """Opened from the first run (AppTest cannot rerun a Chinese page whose radio labels are translated)."""
    from streamlit.testing.v1 import AppTest

    from explorer.steps.qk_view import MODEL_OPEN_KEY

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    for k, v in ({"sentence": SENTENCE, "lang": "zh"} | query).items():
        at.query_params[k] = v
    at.session_state[MODEL_OPEN_KEY] = True
    at.run()
    return at.switch_page(MODEL).run()


def test_a_trained_heads_map_is_made_of_transformers_own_queries_and_keys(app):
    """MiniLM, layer 2, head 5: the queries and keys come from transformers' own query and key projections of the
    layer's input (output_hidden_states), an oracle independent of the engine's head trace."""
    from transformers import AutoModel, AutoTokenizer

    from attn_core import models as M

    at = _model_map(app, rm_layer="2", rm_head="5", focus="4")
    assert not at.exception, [e.value for e in at.exception]
    spec = map_chart(at)
    m = real.wait_for(M.BUNDLED)
    tok, hf = AutoTokenizer.from_pretrained(m.path), AutoModel.from_pretrained(m.path).eval()
    with torch.no_grad():
        x = hf(**tok(SENTENCE, return_tensors="pt"), output_hidden_states=True).hidden_states[2][0]
        sa = hf.encoder.layer[2].attention.self
        d = sa.attention_head_size
        Q, K = (lin(x)[:, 5 * d : 6 * d] for lin in (sa.query, sa.key))
    scores = Q @ K.T / d**0.5
    want = qk_map(Q, K, scores)
    queries, keys = (next(t for t in spec["data"] if t.get("name") == n) for n in ("queries", "keys"))
    assert len(queries["x"]) == x.shape[0]  # every real token, no padding
    got_q, got_k = (torch.tensor([p["x"], p["y"]]).T for p in (queries, keys))
    got, expected = torch.cat([got_q, got_k]), torch.cat([want.queries, want.keys])
    got = got * torch.where((got * expected).sum(0) < 0, -1.0, 1.0)  # a principal axis's sign is arbitrary
    assert torch.allclose(got, expected, rtol=1e-4, atol=1e-4 * float(expected.abs().max()))
    assert any(f"r = {want.correlation:.3f}" in c.value for c in at.caption)
    assert any("d_head = 32" in c.value for c in at.caption)
    lines = [t for t in spec["data"] if t.get("mode") == "lines"]
    assert len(lines) == x.shape[0] and all(line["x"][0] == queries["x"][4] for line in lines)


def test_a_decoders_map_in_chinese_leaves_the_later_keys_out_of_the_correlation(app, tiny_gpt2):
    from tiny_decoders import NAME

    at = _model_map_opened_in_chinese(rm_model=NAME, rm_layer="0", rm_head="1")
    assert not at.exception, [e.value for e in at.exception]
    spec = map_chart(at)
    assert spec is not None and any("主成分" in c.value for c in at.caption)
    ht = real.head(NAME, SENTENCE, 0, 0, 1)
    n = int(ht.mask.shape[0])
    want = qk_map(ht.Q[0, :n], ht.K[0, :n], ht.scaled_scores[0, :n, :n], ht.mask[:n, :n])  # causal: j <= i only
    assert want.correlation is not None
    assert any(f"r = {want.correlation:.3f}" in c.value for c in at.caption)


def test_d_k_1_is_said_to_be_a_line(app):
    from explorer.base.i18n import STRINGS

    for lang in ("en", "zh"):
        at = opened(app(PAGE, query={"d_q": "1", "d_k": "1", "lang": lang}))
        assert not at.exception, [e.value for e in at.exception]
        spec = map_chart(at)
        keys = next(d for d in spec["data"] if d.get("name") in ("keys", "键"))
        assert all(y == 0 for y in keys["y"])  # one number each: the second axis is 0
        said = STRINGS["qk_one_dim"][lang == "zh"].split("r = ")[0]
        assert any(c.value.replace("\\", "").startswith(said) for c in at.caption), [c.value for c in at.caption]


# ---- colour by position, token or norm; a click on a query ----

REPEATED = "the cat saw the dog near the cat"


def _points(spec, *names):
    return [next(d for d in spec["data"] if d.get("name") in (n, {"queries": "查询", "keys": "键"}[n])) for n in names]


def test_colour_by_position_is_each_points_index_on_a_labelled_bar(app):
    at = opened(app(PAGE, query={"sentence": REPEATED}))
    spec = map_chart(at)
    queries, keys = _points(spec, "queries", "keys")
    assert queries["marker"]["color"] == list(range(len(queries["x"])))
    assert keys["marker"]["color"] == list(range(len(keys["x"])))
    bar = spec["layout"]["coloraxis"]["colorbar"]
    assert bar["title"]["text"] == "position"
    assert any("Colour: each point's position" in c.value for c in at.caption)


def test_colour_by_token_gives_a_tokens_query_and_key_one_band_and_a_link_opens_the_map(app):
    at = app(PAGE, query={"sentence": REPEATED, "qk_colour": "token"})  # not opened by hand: the link opens it
    assert not at.exception, [e.value for e in at.exception]
    spec = map_chart(at)
    queries, keys = _points(spec, "queries", "keys")
    words = REPEATED.split()
    q, k = queries["marker"]["color"], keys["marker"]["color"]
    for i, a in enumerate(words):  # the oracle: same colour exactly when the same word, for queries and keys alike
        for j, b in enumerate(words):
            assert (q[i] == k[j]) == (a == b), (a, b)
            assert (q[i] == q[j]) == (a == b)
    bar = spec["layout"]["coloraxis"]["colorbar"]
    assert bar["ticktext"] == list(dict.fromkeys(words)) and bar["tickvals"] == [0, 1, 2, 3, 4]
    assert bar["title"]["text"] == "token"


def test_colour_by_norm_is_each_vectors_length_before_the_maps_scaling(app):
    at = app(PAGE, query={"d_q": "4", "d_k": "4", "qk_colour": "norm", "head_steps": "0"})
    spec = map_chart(at)
    trace = run_trace(at.session_state["settings"])
    Q, K = trace.Q[0].double(), trace.K[0].double()
    want_q = [float(sum(v * v for v in row) ** 0.5) for row in Q.tolist()]  # written out, not Tensor.norm
    want_k = [float(sum(v * v for v in row) ** 0.5) for row in K.tolist()]
    queries, keys = _points(spec, "queries", "keys")
    assert torch.allclose(torch.tensor(queries["marker"]["color"]), torch.tensor(want_q), rtol=1e-5, atol=1e-6)
    assert torch.allclose(torch.tensor(keys["marker"]["color"]), torch.tensor(want_k), rtol=1e-5, atol=1e-6)
    m = qk_map(trace.Q[0], trace.K[0], trace.scaled_scores[0], trace.mask)
    assert abs(m.scale - 1.0) > 1e-3  # the map did scale: the colours are not the drawn lengths
    assert any("before the map's scaling" in c.value for c in at.caption)


def test_a_hostile_colouring_in_the_link_is_dropped_and_named(app):
    for raw in ("evil", "<script>", "1e400", "Position"):
        at = app(PAGE, query={"qk_colour": raw})
        assert not at.exception, [e.value for e in at.exception]
        named = [w.value for w in at.warning if "could not be used" in w.value or "cannot be used for" in w.value]
        assert any("qk" in n and "colour" in n for n in named), (raw, [w.value for w in at.warning])
        assert at.query_params.get("qk_colour") in (None, [])
        assert raw not in " ".join(named)  # never echoed
        spec = map_chart(at)
        assert spec is not None and spec["layout"]["coloraxis"]["colorbar"]["title"]["text"] == "position"


def test_the_colour_bar_is_labelled_in_chinese(app):
    at = app(PAGE, query={"qk_colour": "norm", "lang": "zh"})
    spec = map_chart(at)
    assert spec["layout"]["coloraxis"]["colorbar"]["title"]["text"] == "‖q‖ 或 ‖k‖（缩放前）"
    assert any("缩放之前" in c.value for c in at.caption)


def test_a_clicked_query_is_read_only_from_the_queries_trace_and_in_range():
    from explorer.steps.qk_parts import clicked_query

    def event(*points):
        return {"selection": {"points": list(points), "point_indices": [], "box": [], "lasso": []}}

    curve, n = 8, 8  # eight lines first, then the queries' trace
    assert clicked_query(event({"curve_number": 8, "point_index": 3, "point_number": 3}), curve, n) == 3
    assert clicked_query(event({"curve_number": 9, "point_index": 3}), curve, n) is None  # a key
    assert clicked_query(event({"curve_number": 2, "point_index": 0}), curve, n) is None  # a line
    assert clicked_query(event({"curve_number": 8, "point_index": 8}), curve, n) is None  # out of range
    assert clicked_query(event({"curve_number": 8, "point_index": -1}), curve, n) is None
    assert clicked_query(event({"curve_number": 8, "point_index": True}), curve, n) is None
    assert clicked_query(event({"curve_number": 8, "point_index": "3"}), curve, n) is None
    assert (
        clicked_query(event({"curve_number": 9, "point_index": 1}, {"curve_number": 8, "point_index": 5}), 8, 8) == 5
    )
    for broken in (None, {}, {"selection": None}, {"selection": {"points": "x"}}, "text", event("p")):
        assert clicked_query(broken, curve, n) is None


def test_a_click_writes_the_query_to_the_focus_and_nothing_else(monkeypatch):
    from explorer.steps import qk_parts

    store = {"chart": {"selection": {"points": [{"curve_number": 4, "point_index": 2}]}}}
    monkeypatch.setattr(qk_parts.session, "get", lambda k, d=None: store.get(k, d))
    monkeypatch.setattr(qk_parts.session, "put", store.__setitem__)
    qk_parts.on_click("chart", "focus", 4, 3)()
    assert store["focus"] == 2
    store["chart"] = {"selection": {"points": [{"curve_number": 5, "point_index": 0}]}}  # a key: focus unchanged
    qk_parts.on_click("chart", "focus", 4, 3)()
    assert store["focus"] == 2


def test_the_chart_takes_clicks_and_the_focus_a_click_sets_draws_the_row(app):
    at = opened(app(PAGE, query={"sentence": REPEATED}))
    chart = next(c for c in at.get("plotly_chart") if "chart_qk_map" in c.proto.id)
    assert list(chart.proto.selection_mode)  # points selectable: on_select is set
    spec = map_chart(at)
    assert spec["layout"]["meta"]["queries_curve"] == len([d for d in spec["data"] if d.get("mode") == "lines"])
    at.session_state["focus"] = 5  # what the click's callback writes
    spec = map_chart(at.run())
    queries = _points(spec, "queries")[0]
    lines = [d for d in spec["data"] if d.get("mode") == "lines"]
    assert all(line["x"][0] == queries["x"][5] and line["y"][0] == queries["y"][5] for line in lines)
    assert queries["marker"]["size"][5] > queries["marker"]["size"][0]  # the selected query is drawn larger


# ---- Real model: the probe set's points on the map ----

PROBE_PICKS = (0, 90, 179)  # first, middle and last probe sentence


def _oracle_bert(path: str, sentence: str, layer: int, head: int):
    """transformers' own query and key projections of the layer's input, one sentence alone (no batch, no padding)."""
    from transformers import AutoModel, AutoTokenizer

    tok, hf = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    with torch.no_grad():
        x = hf(**tok(sentence, return_tensors="pt"), output_hidden_states=True).hidden_states[layer][0]
        sa = hf.encoder.layer[layer].attention.self
        d = sa.attention_head_size
        return tuple(lin(x)[:, head * d : (head + 1) * d] for lin in (sa.query, sa.key))


def _probe_rows(points, b: int) -> list[int]:
    return [i for i, s in enumerate(points.sentence) if s == b]


def test_the_probe_sets_queries_and_keys_are_transformers_own_sentence_by_sentence():
    """MiniLM layer 2 head 5: the engine's one padded batch over the probe set gives, for each sentence, the queries
    and keys transformers computes for that sentence alone; positions restart at 0; every real token is there."""
    from attn_core import models as M
    from attn_core.interpret import corpus

    pre = real.wait_for(M.BUNDLED)
    p = real.probe_points(M.BUNDLED, 2, 5)
    sentences = corpus.sentences()
    assert len(set(p.sentence)) == len(sentences) == 180
    assert len(p.token) == p.Q.shape[0] == p.K.shape[0] == sum(M.encode(pre, s).n_real for s in sentences)
    for b in PROBE_PICKS:
        Q, K = _oracle_bert(pre.path, sentences[b], 2, 5)
        rows = _probe_rows(p, b)
        assert [p.position[i] for i in rows] == list(range(Q.shape[0]))
        assert p.token[rows[1]] == pre.tokenizer.tokenize(sentences[b])[0]
        assert_close(p.Q[rows], Q, rtol=1e-4, atol=1e-4)
        assert_close(p.K[rows], K, rtol=1e-4, atol=1e-4)


def test_a_decoders_probe_points_are_gpt2s_own_projections(tiny_gpt2):
    """The tiny GPT-2, layer 1 head 2: ln_1 of the block's input through c_attn (transformers' modules, one sentence
    alone), the head's slice of q and k: the engine's right-padded batch leaves a causal model's tokens as they are."""
    from tiny_decoders import NAME
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from attn_core.interpret import corpus

    p = real.probe_points(NAME, 1, 2)
    tok, hf = AutoTokenizer.from_pretrained(tiny_gpt2), AutoModelForCausalLM.from_pretrained(tiny_gpt2).eval()
    block, d = hf.transformer.h[1], hf.config.n_embd // hf.config.n_head
    for b in PROBE_PICKS:
        ids = tok(corpus.sentences()[b], return_tensors="pt")["input_ids"][:, : hf.config.n_positions]
        with torch.no_grad():
            x = block.ln_1(hf(input_ids=ids, output_hidden_states=True).hidden_states[1][0])
            q, k, _ = block.attn.c_attn(x).split(hf.config.n_embd, dim=-1)
        rows = _probe_rows(p, b)
        assert len(rows) == ids.shape[1]
        assert_close(p.Q[rows], q[:, 2 * d : 3 * d], rtol=1e-4, atol=1e-4)
        assert_close(p.K[rows], k[:, 2 * d : 3 * d], rtol=1e-4, atol=1e-4)


def test_the_real_models_map_with_the_probe_set_is_one_map_of_every_point(app):
    """The option from the link (it opens the map): the probe set's points drawn first (faint), this sentence's on
    top; every point is qk_map of this sentence's queries and keys (transformers' own) with the probe set's as
    ``more``; the caption counts the points and gives r over this sentence."""
    from attn_core import models as M

    at = app(MODEL, query={"sentence": SENTENCE, "rm_layer": "2", "rm_head": "5", "rm_qk_probes": "true"})
    assert not at.exception, [e.value for e in at.exception]
    spec = map_chart(at)
    names = [d.get("name") for d in spec["data"]]
    assert names.index("probe queries") < names.index("queries") and names.index("probe keys") < names.index("keys")
    pre = real.wait_for(M.BUNDLED)
    Q, K = _oracle_bert(pre.path, SENTENCE, 2, 5)
    p = real.probe_points(M.BUNDLED, 2, 5)
    want = qk_map(Q, K, Q @ K.T / Q.shape[-1] ** 0.5, more=(p.Q, p.K))
    drawn = {
        n: next(d for d in spec["data"] if d.get("name") == n)
        for n in ("queries", "keys", "probe queries", "probe keys")
    }
    got = torch.cat([torch.tensor([d["x"], d["y"]]).T for d in drawn.values()])
    expected = torch.cat([want.queries, want.keys, want.more_queries, want.more_keys])
    got = got * torch.where((got * expected).sum(0) < 0, -1.0, 1.0)  # a principal axis's sign is arbitrary
    assert_close(got, expected, rtol=1e-3, atol=1e-3 * float(expected.abs().max()))
    total = 2 * (Q.shape[0] + p.Q.shape[0])
    assert any(f"{total} points" in c.value and "180 probe sentences" in c.value for c in at.caption)
    assert any(f"r = {want.correlation:.3f}" in c.value for c in at.caption)
    lines = [d for d in spec["data"] if d.get("mode") == "lines"]
    assert spec["layout"]["meta"]["queries_curve"] == names.index("queries") == 2 + len(lines)


def test_a_hostile_probe_switch_in_the_link_is_dropped_and_named(app):
    for raw in ("maybe", "1e400", "<b>"):
        at = app(MODEL, query={"sentence": SENTENCE, "rm_qk_probes": raw})
        assert not at.exception, [e.value for e in at.exception]
        named = [w.value for w in at.warning if "could not be used" in w.value or "cannot be used for" in w.value]
        assert named and raw not in " ".join(named), (raw, [w.value for w in at.warning])
        assert at.query_params.get("rm_qk_probes") in (None, [])
        spec = map_chart(at)  # the map is open (the link named its option), without the probe set
        assert spec is not None and "probe queries" not in [d.get("name") for d in spec["data"]]
