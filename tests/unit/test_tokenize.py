import pytest

from attn_core.errors import EmptyTextError, TooManyTokensError
from attn_core.tokenize import split_words, tokenize


def test_tutorial_sentence():
    t = tokenize("Life is short, eat dessert first")
    assert t.vocab == {"Life": 0, "dessert": 1, "eat": 2, "first": 3, "is": 4, "short": 5}
    assert list(t.ids) == [0, 4, 5, 2, 1, 3]


def test_cjk_is_split_into_characters_and_mixed_text_works():
    assert split_words("注意力机制") == ["注", "意", "力", "机", "制"]
    assert split_words("我爱 attention，真的!") == ["我", "爱", "attention", "真", "的"]
    assert split_words("トランスフォーマーは") == list("トランスフォーマーは")


def test_duplicates_share_an_id():
    t = tokenize("the cat saw the dog")
    assert t.ids[0] == t.ids[3]
    assert len(t.vocab) == 4


def test_apostrophes_and_hyphens_stay_inside_words():
    assert split_words("don't stop state-of-the-art -- now") == ["don't", "stop", "state-of-the-art", "now"]


@pytest.mark.parametrize("text", ["", "   ", ",,, !!", "。，、"])
def test_empty_text_is_a_clear_error(text):
    with pytest.raises(EmptyTextError, match="Type at least one word"):
        tokenize(text)


def test_too_many_tokens():
    with pytest.raises(TooManyTokensError, match="Shorten it"):
        tokenize("a " * 600, max_tokens=512)
