"""The residual-stream probes on hidden states whose answer is known by construction."""

import math

import pytest
import torch

from lib.engine.config import CONFIGS, ModelConfig
from lib.engine.model import GPT
from lib.engine.probes import effective_rank, position_cosine, probe, token_accuracy


def test_identical_positions_have_cosine_one_orthogonal_ones_zero():
    row = torch.randn(1, 1, 8)
    assert position_cosine(row.expand(3, 5, 8)) == pytest.approx(1.0)
    assert position_cosine(torch.eye(4).unsqueeze(0)) == pytest.approx(0.0)
    # Two positions at 60 degrees: cosine 1/2.
    h = torch.tensor([[[1.0, 0.0], [0.5, math.sqrt(3) / 2]]])
    assert position_cosine(h) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="at least 2 positions"):
        position_cosine(torch.randn(2, 1, 4))


def test_one_hot_tokens_are_read_back_exactly_identical_states_not_at_all():
    idx = torch.randint(6, (4, 10), generator=torch.Generator().manual_seed(0))
    acc, chance = token_accuracy(torch.nn.functional.one_hot(idx, 6).float(), idx)
    assert acc == 1.0
    counts = torch.bincount(idx[2:].reshape(-1))
    assert chance == pytest.approx(counts.max().item() / counts.sum().item())
    # One vector for every position: every position gets the same guess,
    # right only where that token is.
    same, _ = token_accuracy(torch.ones(4, 10, 3), idx)
    assert same <= chance
    with pytest.raises(ValueError, match="at least 2 sequences"):
        token_accuracy(torch.randn(1, 4, 3), idx[:1, :4])


def test_tokens_unseen_in_the_fitting_half_are_not_scored():
    idx = torch.tensor([[0, 1], [0, 2]])  # token 2 appears only in the scored half
    h = torch.nn.functional.one_hot(idx, 3).float()
    acc, chance = token_accuracy(h, idx)
    assert acc == 1.0 and chance == 1.0  # one scored position (token 0), read back


def test_effective_rank_of_known_matrices():
    assert effective_rank(torch.ones(1, 6, 4)) == pytest.approx(1.0)
    assert effective_rank(torch.eye(5).unsqueeze(0)) == pytest.approx(5.0)
    # Singular values 3 and 1: p = (3/4, 1/4), exp(entropy).
    h = torch.tensor([[[3.0, 0.0], [0.0, 1.0]]])
    assert effective_rank(h) == pytest.approx(
        math.exp(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    )
    assert effective_rank(torch.zeros(1, 3, 2)) == 0.0


def _model(config, mixer="attention"):
    torch.manual_seed(0)
    attn_res, ffn_res = CONFIGS[config]
    return GPT(
        ModelConfig(
            vocab_size=11,
            block_size=16,
            n_layer=3,
            n_head=2,
            n_embd=32,
            dropout=0.0,
            attn_res=attn_res,
            ffn_res=ffn_res,
            mixer=mixer,
        )
    )


def test_probe_has_one_row_per_state_and_leaves_the_model_as_it_was():
    model = _model("FullResidual").train()
    idx = torch.randint(11, (8, 16), generator=torch.Generator().manual_seed(1))
    threads = torch.get_num_threads()
    table = probe(model, idx)
    assert (
        list(table.depth) == [0, 1, 2, 3] and model.training and torch.get_num_threads() == threads
    )
    assert set(table.columns) == {
        "depth",
        "position_cosine",
        "token_accuracy",
        "token_chance",
        "effective_rank",
    }
    # the embedding holds the token (position embeddings blur it a little)
    assert table.token_accuracy[0] > 0.9


def test_attention_without_its_skip_averages_the_token_away_at_initialisation_a_local_mixer_does_not():  # noqa: E501 (the test's name)
    """The mechanism the chapter measures on the trained models: at init attention is
    close to a uniform average over the positions before, so FFNOnly's first block
    replaces each token by that average."""
    idx = torch.randint(11, (16, 16), generator=torch.Generator().manual_seed(2))
    ffn_only = probe(_model("FFNOnly"), idx)
    local = probe(_model("FFNOnly", mixer="local"), idx)
    attn_only = probe(_model("AttnOnly"), idx)
    assert (
        ffn_only.token_accuracy[1] < 0.5 < min(attn_only.token_accuracy[1], local.token_accuracy[1])
    )
    assert (
        ffn_only.position_cosine[1]
        > 0.5
        > max(attn_only.position_cosine[1], local.position_cosine[1])
    )
    assert ffn_only.effective_rank[3] < 0.5 * local.effective_rank[3]
