"""The records of released models (``posenc.models``): well-formed, and what the library's
model-specific functions make of a record's values is what the record says.

The pages compute every number about a released model from its record; these tests hold the
records themselves (each field known, each source an entry of the References page, nothing
mutable) and hold the functions that take a record's values to them (a schedule built with a
record's base rotates at that base, a YaRN ramp built from a record's parameters is the ramp those
parameters define). ``tests/hooks/test_model_atlas.py`` holds the pages to the records.
"""

from __future__ import annotations

import math
import pathlib
import re

import numpy as np
import pytest

import posenc
from posenc import models

ROOT = pathlib.Path(__file__).resolve().parents[2]
RECORD_KEY = re.compile(r"^@[a-z]+\{([^,\s]+),$", re.M)


def entries_of_the_references_page() -> set[str]:
    return set(RECORD_KEY.findall((ROOT / "docs" / "references.md").read_text(encoding="utf-8")))


def test_every_record_is_well_formed():
    entries = entries_of_the_references_page()
    assert list(models.MODELS) == [record.key for record in models.records()], "MODELS holds each record once"
    for record in models.records():
        assert record.key and record.name and record.kind and record.family, record
        assert record.family.lower() in record.name.lower(), f"{record.key}: {record.family!r} is not in its name"
        assert record.settings, f"{record.key} holds no setting"
        for field, setting in record.settings.items():
            assert field in models.FIELDS, f"{record.key}: {field!r} is not described in FIELDS"
            assert setting.source.reference in entries, (
                f"{record.key}.{field}: its source {setting.source.reference!r} is no entry of the References page"
            )
            assert setting.source.where.strip(), f"{record.key}.{field}: its source says nowhere"
            assert isinstance(setting.source.confirmed, bool)
            assert record.source(field) is setting.source and record[field] is setting.value


def test_every_field_is_described():
    for field, meaning in models.FIELDS.items():
        assert re.fullmatch(r"[a-z][a-z_]*", field) and len(meaning.split()) >= 4, (field, meaning)


def test_records_cannot_be_changed_by_a_caller():
    kimi = models.model("kimi-k2")
    with pytest.raises(TypeError):
        kimi["rope_scaling"]["factor"] = 2.0
    with pytest.raises(TypeError):
        models.MODELS["kimi-k2"] = kimi  # type: ignore[index]
    with pytest.raises(AttributeError):
        kimi.key = "other"  # type: ignore[misc]


def test_an_unknown_model_or_field_is_refused_by_name():
    with pytest.raises(ValueError, match="key must be one of .*'smollm3-3b'.*got 'smollm3'"):
        models.model("smollm3")
    with pytest.raises(KeyError, match="field must be one of the settings of 'bert-base'"):
        models.model("bert-base")["rope_theta"]
    assert models.model("bert-base").get("rope_theta") is None
    assert "rope_theta" not in models.model("bert-base") and "rope_theta" in models.model("smollm3-3b")


def test_an_unconfirmed_value_says_what_it_rests_on():
    for record in models.records():
        for field, setting in record.settings.items():
            if not setting.source.confirmed:
                assert "not read" in setting.source.where or "not re-read" in setting.source.where, (
                    f"{record.key}.{field}: an unconfirmed value must say which file was not read"
                )


# --- the functions that take a record's values -----------------------------------------------


def test_smollm3_layers_given_the_record_rotate_at_its_base_and_drop_rope_at_its_interval():
    smollm3 = models.model("smollm3-3b")
    layers = posenc.smollm3_layers(
        smollm3["num_hidden_layers"],
        no_rope_layer_interval=smollm3["no_rope_layer_interval"],
        rope_theta=smollm3["rope_theta"],
    )
    assert len(layers) == smollm3["num_hidden_layers"]
    assert {layer.base for layer in layers if layer.rotates} == {smollm3["rope_theta"]}
    interval = smollm3["no_rope_layer_interval"]
    assert [index for index, layer in enumerate(layers) if not layer.rotates] == list(
        range(interval - 1, len(layers), interval)
    )


def test_the_configuration_class_default_is_not_the_released_smollm3_base():
    # Why the records exist: a schedule left at its default describes SmolLM3Config, not SmolLM3-3B.
    default = posenc.smollm3_layers(4)
    assert {layer.base for layer in default if layer.rotates} != {models.model("smollm3-3b")["rope_theta"]}


def test_gpt_oss_schedule_given_the_record_alternates_window_and_full_layers():
    gptoss = models.model("gpt-oss-20b")
    period = gptoss["global_period"]
    layers = posenc.layer_schedule(
        gptoss["num_hidden_layers"], period, local_base=gptoss["rope_theta"], global_base=gptoss["rope_theta"]
    )
    assert [layer.attention == "full_attention" for layer in layers] == [
        (index + 1) % period == 0 for index in range(gptoss["num_hidden_layers"])
    ]
    assert {layer.base for layer in layers} == {gptoss["rope_theta"]}


def pair_at_turns(dim: int, length: int, turns: float, base: float) -> float:
    """The (fractional) pair index r at which ``length`` positions make ``turns`` turns: the pair whose
    wavelength 2 pi base**(2r/dim) is length / turns, solved for r (written here from the definition)."""
    return dim * math.log(length / (2 * math.pi * turns)) / (2 * math.log(base))


def test_kimi_k2_yarn_is_a_hard_step_at_the_pair_that_turns_once():
    kimi = models.model("kimi-k2")
    scaling = kimi["rope_scaling"]
    arguments = kimi.yarn_arguments()
    assert arguments["dim"] == kimi["qk_rope_head_dim"] and arguments["base"] == kimi["rope_theta"]
    ramp = posenc.yarn_ramp(**arguments)
    assert scaling["beta_fast"] == scaling["beta_slow"]
    edge = pair_at_turns(
        kimi["qk_rope_head_dim"], scaling["original_max_position_embeddings"], scaling["beta_fast"], kimi["rope_theta"]
    )
    pairs = np.arange(kimi["qk_rope_head_dim"] // 2)
    np.testing.assert_array_equal(ramp, np.where(pairs <= math.floor(edge), 0.0, 1.0))
    # Every pair is either kept or divided by the factor: no pair is blended.
    inv_freq, _ = posenc.rope_scaling_frequencies(arguments["dim"], scaling, base=arguments["base"])
    plain = posenc.rope_frequencies(arguments["dim"], base=arguments["base"])
    kept = np.isclose(inv_freq, plain, rtol=1e-12)
    divided = np.isclose(inv_freq, plain / scaling["factor"], rtol=1e-12)
    assert np.all(kept ^ divided) and kept.sum() == math.floor(edge) + 1


def test_gpt_oss_yarn_keeps_its_ramp_ends_unrounded():
    gptoss = models.model("gpt-oss-20b")
    scaling = gptoss["rope_scaling"]
    arguments = gptoss.yarn_arguments()
    assert arguments["truncate"] is False and arguments["dim"] == gptoss["head_dim"]
    low, high = posenc.yarn_correction_range(**arguments)
    expected = [
        pair_at_turns(
            arguments["dim"], scaling["original_max_position_embeddings"], scaling[beta], gptoss["rope_theta"]
        )
        for beta in ("beta_fast", "beta_slow")
    ]
    assert (low, high) == pytest.approx(expected, rel=1e-12)
    assert posenc.yarn_correction_range(**(arguments | {"truncate": True})) == (
        math.floor(expected[0]),
        math.ceil(expected[1]),
    )


def test_yarn_arguments_need_a_yarn_scaling():
    with pytest.raises(KeyError, match="rope_scaling"):
        models.model("bert-base").yarn_arguments()
    linear = models._record(
        "linear-test",
        "Linear test",
        "decoder",
        rope_theta=(1e4, models.Source("transformers", "a test record")),
        head_dim=(64, models.Source("transformers", "a test record")),
        rope_scaling=({"rope_type": "linear", "factor": 2.0}, models.Source("transformers", "a test record")),
    )
    with pytest.raises(ValueError, match="rope_scaling of 'linear-test' must be of type 'yarn'"):
        linear.yarn_arguments()


def test_a_record_with_an_undescribed_field_is_refused():
    with pytest.raises(ValueError, match="fields must be named in FIELDS, got \\['rope_base'\\]"):
        models._record("bad", "Bad", "decoder", rope_base=(1e4, models.Source("transformers", "a test record")))


def test_t5_buckets_given_the_record_saturate_at_its_max_distance():
    t5 = models.model("t5")
    buckets, distance = t5["relative_attention_num_buckets"], t5["relative_attention_max_distance"]
    for bidirectional in (True, False):
        sign = 1 if bidirectional else -1  # the decoder's causal bias sees keys before the query
        far = posenc.t5_relative_position_bucket(
            np.array([distance, distance + 1, 10 * distance]) * sign,
            bidirectional=bidirectional,
            num_buckets=buckets,
            max_distance=distance,
        )
        assert set(np.ravel(far).tolist()) == {buckets - 1}
    assert t5["relative_attention_bias_stacks"] == ("encoder", "decoder")


def test_bert_stages_cover_its_training_and_end_at_its_table():
    bert = models.model("bert-base")
    assert len(bert["training_lengths"]) == len(bert["training_step_shares"])
    assert math.isclose(sum(bert["training_step_shares"]), 1.0)
    assert list(bert["training_lengths"]) == sorted(bert["training_lengths"])
    assert bert["training_lengths"][-1] == bert["max_position_embeddings"]
