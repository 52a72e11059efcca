"""One table for every setting: a knob registered in one place, ``register(Knob(...))``, is in every context it has
a span for, with that span's numbers, and in no other: the trace's limits and checks, the commands' flags (``trace``,
``train``, ``bench``), the sidebar, the Lab (its limits, default and check), the Complexity sweep (a ``Shape``'s
value, its check and the child's argv) and the Variants page's inputs. The numbers below are the row's own, written
out again by hand; ``flat`` has the trace's span alone and is in none of the others."""

import pytest

from attn_core import AttentionConfigError, Settings, bench, lab, validate
from attn_core.cli.entry import build_parser
from attn_core.knobs import KNOBS, Knob, Span, limits, register, unregister
from explorer.controls import BY_NAME
from explorer.jobs import sweeps
from explorer.variants import results

STRETCH = Knob(
    "stretch",
    "int",
    3,
    1,
    9,
    help="a made-up stretch",
    section="sec_scores",
    lab=Span(1, 5, 2),
    sweep=Span(default=4),
    page=Span(high=6),
)
FLAT = Knob("flat", "float", 0.5, 0.0, 1.0, section="sec_model")


@pytest.fixture
def knobs():
    register(STRETCH)
    register(FLAT)
    yield
    unregister("stretch")
    unregister("flat")
    assert "stretch" not in KNOBS and "stretch" not in BY_NAME


def flags(command: str) -> dict:
    """The flags of one subcommand, by destination: ``{dest: default}``."""
    parser, _ = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {a.dest: a.default for a in sub._actions if a.option_strings}


def test_the_trace_takes_it_with_its_own_range(knobs):
    assert limits("trace")["stretch"] == (1, 9) and limits("trace", ("float",))["flat"] == (0.0, 1.0)
    assert Settings().option("stretch") == 3 and validate(Settings().with_options(stretch=9)).option("stretch") == 9
    with pytest.raises(AttentionConfigError, match=r"stretch = 10 is outside the range 1..9"):
        validate(Settings().with_options(stretch=10))
    with pytest.raises(AttentionConfigError, match=r"flat = 1.5 is outside the range 0.0..1.0"):
        validate(Settings().with_options(flat=1.5))


def test_every_command_has_its_flag_where_it_has_the_span(knobs):
    assert "stretch" in flags("trace") and "flat" in flags("trace")
    assert "stretch" in flags("train") and "flat" not in flags("train")
    assert "stretch" in flags("bench") and "flat" not in flags("bench")
    parser, _ = build_parser()
    args = parser.parse_args(["trace", "a b", "--stretch", "7", "--flat", "0.25"])
    assert (args.stretch, args.flat) == (7, 0.25)


def test_the_sidebar_draws_it_with_the_traces_range(knobs):
    c = BY_NAME["stretch"]
    assert (c.kind, c.low, c.high, c.default, c.section) == ("int", 1, 9, 3, "sec_scores")
    f = BY_NAME["flat"]
    assert (f.kind, f.low, f.high, f.default, f.section) == ("float", 0.0, 1.0, 0.5, "sec_model")


def test_the_lab_takes_it_with_its_own_range_and_default(knobs):
    assert lab.LAB_LIMITS["stretch"] == (1, 5) and "flat" not in lab.LAB_LIMITS and "flat" not in lab.SHARED
    assert lab.LabConfig().value("stretch") == 2
    assert lab.validate(lab.LabConfig().with_values(stretch=5)).value("stretch") == 5
    with pytest.raises(AttentionConfigError, match=r"stretch = 6 is outside the range 1..5"):
        lab.validate(lab.LabConfig().with_values(stretch=6))  # inside the trace's range, outside the Lab's


def sweep(**extra) -> bench.SweepConfig:
    return bench.SweepConfig(kernels=("full",), lengths=(16,), shape=bench.Shape(extra=extra))


def test_the_sweep_takes_it_checks_it_and_passes_it_to_its_child(knobs):
    cfg = sweep(stretch=4)
    bench.validate_sweep(cfg)
    argv = sweeps.command(cfg)
    assert argv[argv.index("--stretch") + 1] == "4" and "--flat" not in argv
    with pytest.raises(AttentionConfigError, match="stretch = 0; it must be at least 1"):
        bench.validate_sweep(
            bench.SweepConfig(kernels=("full",), lengths=(16,), shape=bench.Shape(extra={"stretch": 0}))
        )
    with pytest.raises(AttentionConfigError):
        bench.validate_sweep(
            bench.SweepConfig(kernels=("full",), lengths=(16,), shape=bench.Shape(extra={"flat": 0.5}))
        )


def test_the_variants_page_has_its_input_with_the_pages_range(knobs):
    span = results.inputs()["stretch"]
    assert (span.low, span.high, span.default) == (1, 6, 3) and "flat" not in results.inputs()


def test_a_shape_made_from_the_table_has_its_fields_and_defaults():
    """The Shape's fields are the sweep's own and every knob with a sweep span, with the sweep's defaults."""
    swept = {name: k.span("sweep").default for name, k in KNOBS.items() if k.sweep is not None}
    shape = bench.Shape()
    assert {name: getattr(shape, name) for name in swept} == swept
    assert (shape.batch, shape.d_head, shape.heads, shape.window, shape.features, shape.proj_k) == (
        1,
        64,
        4,
        128,
        64,
        64,
    )
