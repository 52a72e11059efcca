"""The tutorial's printed numbers and shapes, reproduced by the engine (to 4 decimals)."""

import torch
import torch.nn.functional as F

from attn_core.tutorial import PRINTED, vocab_and_ids, walkthrough


def test_vocabulary_and_ids():
    vocab, ids = vocab_and_ids()
    assert vocab == PRINTED["vocab"]
    assert ids == PRINTED["ids"]


def test_printed_scores_and_weights():
    w = walkthrough()
    assert torch.allclose(w.omega_2, torch.tensor(PRINTED["omega_2"]), atol=5e-5)
    assert torch.allclose(w.attention_weights_2, torch.tensor(PRINTED["attention_weights_2"]), atol=5e-5)
    assert w.matches("omega_2") and w.matches("attention_weights_2")
    assert not w.matches("omega_2", atol=1e-9)  # the check can fail: the tutorial prints 4 decimals
    assert w.attention_weights_2.argmax().item() == 4  # "is" attends most to "dessert" (0.4917)


def test_printed_shapes():
    assert walkthrough().shapes() == PRINTED["shapes"]


def test_matches_the_tutorial_code_literally():
    """Run the tutorial's own code (global RNG, reseeded) and compare every later quantity."""
    sentence = "Life is short, eat dessert first"
    dc = {s: i for i, s in enumerate(sorted(sentence.replace(",", "").split()))}
    sentence_int = torch.tensor([dc[s] for s in sentence.replace(",", "").split()])
    torch.manual_seed(123)
    embedded = torch.nn.Embedding(6, 16)(sentence_int).detach()
    torch.manual_seed(123)
    W_query, W_key, W_value = torch.rand(24, 16), torch.rand(24, 16), torch.rand(28, 16)
    x_2 = embedded[1]
    keys = W_key.matmul(embedded.T).T
    values = W_value.matmul(embedded.T).T
    att = F.softmax(W_query.matmul(x_2).matmul(keys.T) / 24**0.5, dim=0)
    mq, mk, mv = torch.rand(3, 24, 16), torch.rand(3, 24, 16), torch.rand(3, 28, 16)
    stacked = embedded.T.repeat(3, 1, 1)
    m_keys = torch.bmm(mk, stacked).permute(0, 2, 1)
    m_values = torch.bmm(mv, stacked).permute(0, 2, 1)
    m_query = mq.matmul(x_2)
    ctx = torch.cat([F.softmax(m_query[h].matmul(m_keys[h].T) / 24**0.5, dim=0).matmul(m_values[h]) for h in range(3)])
    target = torch.rand(8, 16)
    cross = F.softmax(W_query.matmul(target[1]).matmul(keys.T) / 24**0.5, dim=0).matmul(values)

    w = walkthrough()
    assert torch.equal(w.trace.x, embedded)
    assert torch.allclose(w.context_vector_2, att.matmul(values), atol=1e-5)
    assert torch.allclose(w.multihead_keys, m_keys, atol=1e-5)
    assert torch.allclose(w.multihead_values, m_values, atol=1e-5)
    assert torch.allclose(w.final_context, ctx, atol=1e-4)
    assert torch.equal(w.embedded_sentence_2, target)
    assert torch.allclose(w.cross_context, cross, atol=1e-4)
