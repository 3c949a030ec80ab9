"""The demo's stages in order: the model check (M, before anything starts), scenarios A-D,
client requests through the selected SCI (R), the forwarders steered by the C-PS with client
requests through the ingress forwarder (F, controller.demo.steer), and an agent session through
the step-30 and tail-event episode of the agent draft (G, controller.demo.agent); before them,
an agent refused a write by access control (N, controller.demo.access). Each part is
one :class:`Stage`; a part not built yet would say "not yet" rather than being faked.
"""

from __future__ import annotations

from controller.demo.access import ACCESS_CONTROL
from controller.demo.agent import AGENT_SESSION
from controller.demo.scenarios import SCENARIOS
from controller.demo.steer import STEERING
from controller.demo.steps import Run, Stage, Step
from controller.demo.table import grid
from controller.demo.topology import BY_LABEL
from controller.model import Schema, project_yang_dir
from controller.model.examples import check_example, load_examples

REQUESTS = 10


def check_model() -> Step:
    """Stage M: the CATS modules compile with libyang and every example of ``yang/examples/``
    validates, or is refused for its stated reason (invalid/expected.json)."""
    with Schema() as schema:
        modules = [f"{n}@{r}" for n, r in schema.implemented_modules() if n.startswith("ietf-cats")]
        examples = load_examples(project_yang_dir() / "examples")
        problems = [
            f"{example.name}: {problem}"
            for example in examples
            if (problem := check_example(schema, example)) is not None
        ]
    refused = sum(example.expected is not None for example in examples)
    lines = (
        f"    modules: {', '.join(modules)}",
        f"    {len(examples) - refused} valid and {refused} invalid examples checked",
    )
    title = "the modules compile; every example validates or is refused as stated"
    return Step("M", title, lines, tuple(problems))


def requests_land(run: Run) -> Step:
    """Client requests sent through the SCI the C-PS selects land on its instances only
    (sci-implementation 3: the SCI dispatches to its service instances)."""
    decision = run.bed.select()
    title = "client requests through the selected SCI land on its instances"
    label = None if decision.csci_id is None else run.bed.label_of(decision.csci_id)
    if label is None:
        return Step("R", title, (), (f"no SCI selected: {decision.result}",))
    before = run.bed.served()
    statuses = run.bed.drive((label,), REQUESTS)
    after = run.bed.served()
    delta = {name: after[name] - before[name] for name in after}
    mine = {i.name for i in BY_LABEL[label].instances}
    rows = [
        [name, sci.label, str(count)]
        for sci in BY_LABEL.values()
        for i in sci.instances
        if (count := delta[(name := i.name)]) or name in mine
    ]
    lines = (
        f"    -> {REQUESTS} requests to {run.bed.labels[run.bed.csci(label)]} "
        f"at {run.bed.scis[label].url}: statuses {sorted(set(statuses))}",
        *grid(["instance", "behind", "requests served"], rows),
    )
    problems = (
        [f"{statuses.count(200)} of {REQUESTS} answered 200"] if set(statuses) != {200} else []
    )
    landed = sum(delta[n] for n in mine)
    if landed != REQUESTS or sum(delta.values()) != landed:
        problems.append(f"{landed} of {REQUESTS} reached {label}'s instances, {delta}")
    return Step("R", title, lines, tuple(problems))


STAGES: tuple[Stage, ...] = (
    ACCESS_CONTROL,
    *SCENARIOS,
    Stage("R", "Client requests (sci-implementation 3, 6)", (requests_land,)),
    STEERING,
    AGENT_SESSION,
)
