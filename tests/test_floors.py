"""The n-gram floors (lib.engine.floors) on toy corpora whose answer is worked out by hand, and
the ladder on TinyShakespeare."""

import math

import numpy as np
import pytest
import torch

from lib.engine import floors
from lib.engine.data import Corpus


# --- unigram floor ------------------------------------------------------------------
def test_unigram_floor_by_hand():
    toy = Corpus("toy", np.array([0, 0, 1]), np.array([0, 1]), 2, {})
    assert (
        abs(floors.unigram_floor(toy, alpha=0) - -(math.log(2 / 3) + math.log(1 / 3)) / 2) < 1e-12
    )


def test_unigram_floor_smoothing_by_hand():
    # add-0.5 with vocab 3: counts (2.5, 1.5, 0.5) / 4.5; token 2 never seen in train.
    toy = Corpus("toy", np.array([0, 0, 1]), np.array([2]), 3, {})
    assert abs(floors.unigram_floor(toy) - -math.log(0.5 / 4.5)) < 1e-12


# --- the ladder of floors ------------------------------------------------------------
def _corpus(train, val, vocab):
    import numpy as np

    from lib.engine.data import Corpus

    return Corpus("toy", np.array(train), np.array(val), vocab, {})


def test_ngram_floors_by_hand():
    import math

    from lib.engine.floors import ngram_floor, unigram_floor

    c = _corpus([0, 1, 0, 1, 0, 1], [0, 1, 0, 1], 2)
    # Unigram: 3 zeros and 3 ones (+0.5 each) -> 1/2 each: ln 2 on every token.
    assert ngram_floor(c, 1) == pytest.approx(math.log(2)) == pytest.approx(unigram_floor(c))
    # Bigram: in train "0" is followed by 1 three times, "1" by 0 twice: P(1|0) = 3.5/4, P(0|1) =
    # 2.5/3. Val scores 1|0, 0|1, 1|0.
    expected = -(2 * math.log(3.5 / 4) + math.log(2.5 / 3)) / 3
    assert ngram_floor(c, 2) == pytest.approx(expected)
    # Trigram: contexts (0,1) -> 0 twice, (1,0) -> 1 twice; val scores 0|(0,1), 1|(1,0): 2.5/3 each.
    assert ngram_floor(c, 3) == pytest.approx(-math.log(2.5 / 3))


def test_unseen_context_falls_back_to_uniform():
    import math

    from lib.engine.floors import ngram_floor

    c = _corpus([0, 0, 0], [2, 1], 3)  # context 2 never seen in train
    assert ngram_floor(c, 2) == pytest.approx(math.log(3))


def test_an_order_whose_windows_overflow_int64_is_refused():
    from lib.engine.floors import ngram_floor

    c = _corpus([0, 1, 2, 3, 4], [1, 2, 3, 4], 50257)  # GPT-2's vocabulary: 50,257^5 > 2^63
    assert ngram_floor(c, 4) > 0
    with pytest.raises(ValueError, match="largest order here is 4"):
        ngram_floor(c, 5)


def test_the_ladder_descends_on_shakespeare():
    from lib.engine.data import shakespeare_char
    from lib.engine.floors import ngram_floor

    c = shakespeare_char()
    ladder = [ngram_floor(c, n) for n in (1, 2, 3)]
    assert ladder[0] > ladder[1] > ladder[2] > 1.5


def test_the_floor_on_the_evaluations_own_batches_by_hand():
    toy = Corpus("toy", np.array([0, 0, 1]), np.array([1, 1]), 2, {})
    # add-0.5: P(0) = 2.5/4, P(1) = 1.5/4; the batches' targets are 0, 1, 1.
    batches = [(None, torch.tensor([[0, 1]])), (None, torch.tensor([[1]]))]
    expected = -(math.log(2.5 / 4) + 2 * math.log(1.5 / 4)) / 3
    assert floors.unigram_floor_on(toy, batches) == pytest.approx(expected)
    assert floors.unigram_floor(toy) == pytest.approx(-math.log(1.5 / 4))


def test_the_bigram_floor_on_the_evaluations_own_batches_by_hand():
    toy = Corpus("toy", np.array([0, 1, 0, 1, 0, 1]), np.array([0, 1]), 2, {})
    # add-0.5: after 0 comes 1 three times: P(1|0) = 3.5/4; after 1 comes 0 twice: P(0|1) = 2.5/3.
    batches = [(torch.tensor([[0, 1]]), torch.tensor([[1, 0]]))]
    assert floors.bigram_floor_on(toy, batches) == pytest.approx(
        -(math.log(3.5 / 4) + math.log(2.5 / 3)) / 2
    )
    big = Corpus("big", np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64), 50257, {})
    with pytest.raises(ValueError, match="up to 4,096"):
        floors.bigram_floor_on(big, batches)
