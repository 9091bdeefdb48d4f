from agent_doubles import correct, rejected, wrong
from kernelwright.agents.context import describe_verdict, profile_summary
from kernelwright.agents.prompting import render
from kernelwright.constraints import Reference
from kernelwright.records import DeviceInfo, SpeedOfLight
from kernelwright.search.constants import tunables


def test_describe_wrong_and_rejected_verdicts():
    text = describe_verdict(wrong(5.65))
    assert (
        "status: incorrect" in text and "max abs 5.65" in text and "trials passed: 0 of 5" in text
    )
    text = describe_verdict(rejected("exception-fallback", "line 9: catches an exception"))
    assert "guard check `exception-fallback` rejected it: line 9" in text


def test_describe_correct_verdict_with_speed_of_light():
    import dataclasses

    sol = SpeedOfLight(10, 4000, 0.001, "memory", 0.25, 4300.0, 790.0, "measured H200")
    dev = DeviceInfo("cuda", "NVIDIA H200", "2.11", "3.6")
    v = dataclasses.replace(correct(0.5, eager_ms=1.0), sol=sol, device=dev)
    text = describe_verdict(v)
    assert "speedup 2x" in text and "25.0% of the memory-bound floor" in text
    assert "not representative" in text
    profile = profile_summary(v)
    assert "memory-bound" in profile and "NVIDIA H200" in profile


def test_a_host_bound_call_is_said_and_the_containment_notes_are_not():
    import dataclasses

    v = dataclasses.replace(correct(0.5, eager_ms=1.0), labels=(
        "host-bound: issuing a call took 0.52 ms, its device span 0.50 ms",
        "containment: no PID namespace"))
    text = describe_verdict(v)
    assert "host-bound: issuing a call took 0.52 ms" in text and "containment" not in text


def test_templates_render_with_minimal_context():
    assert "Stage 1" in render("planner", task_source="t", skills=[], references=[], notes=None)
    coder = render(
        "coder",
        task_source="t",
        plan=None,
        pitfalls=[],
        references=[Reference("r", "x" * 7000)],
        failures=[],
    )
    assert "(truncated)" in coder
    assert "#3" in render(
        "debugger", task_source="t", candidate_id=3, source="s", feedback="f", pitfalls=[]
    )
    tuner = render(
        "tuner",
        task_source="t",
        candidate_id=3,
        source="s",
        feedback="f",
        pitfalls=[],
        device=None,
        profile=None,
        attempts=["#4 (tuner): correct, 1.10x"],
    )
    assert "#4 (tuner)" in tuner
    assert "no usable code: x" in render("no_code", problem="x")


def test_tunables_are_module_level_upper_case_constants():
    source = "BLOCK_M = 64\nNUM_WARPS = 4\nUSE_TMA = True\nname = 'x'\nMODE = 'fast'\n"
    assert tunables(source) == {"BLOCK_M": 64, "NUM_WARPS": 4, "MODE": "fast"}
    assert tunables("not python (") == {}
