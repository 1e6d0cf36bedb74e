"""Writes real Inspect AI ``.eval`` logs with Inspect itself (its offline ``mockllm/model``): one log per
model, the same samples in every log, every answer chosen here, so the correctness of each
(model, sample, epoch) is known independently of the reader.

Run as a script (``python -m tests.items.inspect_logs OUT_DIR``) in a subprocess: Inspect's import
and event loop stay out of the test process."""

from __future__ import annotations

import json
import sys

N_SAMPLES = 12
EPOCHS = 2
# model -> answers per (epoch, sample): "yes" is correct
MODELS = {
    "strong": lambda e, i: "yes" if (i % 6 != 0) else "no",  # 10/12 per epoch
    "medium": lambda e, i: "yes" if (i % 3 != 0) or (e == 1 and i == 3) else "no",
    "weak": lambda e, i: "yes" if i < 4 else "no",
}


def expected() -> dict:
    """model -> sample id -> list of 0/1 per epoch."""
    return {m: {f"s{i}": [1.0 if f(e, i) == "yes" else 0.0 for e in range(EPOCHS)] for i in range(N_SAMPLES)}
            for m, f in MODELS.items()}


def write(out_dir: str) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    samples = [Sample(input=f"Is {i} a question?", target="yes", id=f"s{i}") for i in range(N_SAMPLES)]
    task = Task(dataset=samples, solver=generate(), scorer=match(), name="toy_yes")

    def output(text):
        o = ModelOutput.from_content(model="mockllm", content=text)
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return o

    for name, answer in MODELS.items():
        # mockllm serves custom outputs in call order: samples run epoch by epoch, in dataset order
        outs = [output(answer(e, i)) for e in range(EPOCHS) for i in range(N_SAMPLES)]
        model = get_model(f"mockllm/{name}", custom_outputs=outs, memoize=False)
        logs = inspect_eval(task, model=model, log_dir=f"{out_dir}/{name}", epochs=EPOCHS, display="none",
                            max_samples=1, max_connections=1, log_format="eval", metadata={"model_name": name})
        assert logs[0].status == "success", logs[0].error
    print(json.dumps(expected()))


if __name__ == "__main__":
    write(sys.argv[1])
