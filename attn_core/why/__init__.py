"""Why a head attends: one weight's score split into its sources, and an atlas of every head's spread and sinks.

    stream   what a layer's attention reads, split exactly by source (embeddings, earlier heads and MLPs, biases)
    weight   explain_weight(m, run, layer, head, query, key) -> Why: per-dimension terms, the query-source ×
             key-source table, and the largest source removed (predicted beside recomputed through the model)
    remove   a source removed where it is made (context-gated hooks; the shared model is never edited)
    atlas    atlas(m, run): entropy, effective keys, largest weight, first-token share (and weighted by what the
             head writes for it) per layer and head
    qkmap    qk_map(Q, K, scores) -> QKMap: one head's queries and keys on one map (AttentionViz), moved by the two
             transforms that leave every softmax unchanged, exact when d = 2, PCA otherwise; ``more``: other
             sentences' points on the same map
    qkprobe  probe_states(m, sentences), probe_queries_keys(m, states, layer, head): one head's queries and keys of
             every token of many sentences (the shipped probe set), from one batched forward pass
    spread   spread(w, allowed): one weight matrix's mean row entropy and exp(H); dispersion(gap, ns): softmax's
             largest weight as the keys grow (with the published adaptive temperature); sink_errors: a window with
             global tokens against full attention (the Variants page)

Every family of ``attn_core.models`` (BERT-style encoders, GPT-2, Llama-style decoders).
"""

from .atlas import atlas, row_stats
from .qkmap import QKMap, qk_map
from .stream import BIAS, read_by_attention
from .weight import Why, explain_weight, split, to_dict

__all__ = [
    "BIAS",
    "QKMap",
    "Why",
    "atlas",
    "explain_weight",
    "qk_map",
    "read_by_attention",
    "row_stats",
    "split",
    "to_dict",
]
