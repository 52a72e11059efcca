"""Interventions on the trained encoder (ablate, mask, patch, prune) and what each head does.

hooks    run the model with a ``Plan`` of per-head interventions (forward hooks, no model code edited)
ablate   one intervention, the 6 × 12 importance map
patch    activation patching from a corrupted sentence of the same length
prune    greedy pruning, 10 % of the heads at a time, over the shipped corpus
corpus   the shipped probe set (schema, validator) and the corpus means
roles    head roles on the probe set (Clark et al., 2019; Voita et al., 2019) and attention sinks
minimal_pair  two sentences that differ in a word or two: aligned, what moved per head, the next-token gap
              and the heads whose ablation closes it; the curated pairs (``pairs.toml``)
head_match    two models' or checkpoints' heads matched one to one on the probe set (Jensen–Shannon distance)
"""
