"""A `torch.func` DP-SGD loop (vmap(grad(loss)) at module level) is audited, stored and resumed like any other loop."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch_func_loop  # noqa: E402
from dpaudit.audit import Execution, UserTrainer, audit_dpsgd  # noqa: E402
from dpaudit.execution.fingerprint import UnfingerprintableError, code_digest, fingerprint  # noqa: E402
from dpaudit.mechanisms import Claim  # noqa: E402

HERE = Path(__file__).parent


def _target():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, torch_func_loop.FEATURES)).astype(np.float32)
    x[:, -1] = 0.0
    return UserTrainer(train=torch_func_loop.train, losses=torch_func_loop.losses, x=x, y=(x[:, 0] > 0).astype(int),
                       claim=Claim(2.0, 1e-5))


def test_a_torch_func_loop_is_audited_stored_and_resumed_to_the_same_result(tmp_path):
    store = tmp_path / "runs"
    first = audit_dpsgd(target=_target(), canary="crafted", threat="white-box", runs=12, dataset="user", seed=0,
                        execution=Execution(store=store))
    lines = (store / "runs.jsonl").read_text().splitlines()
    (store / "runs.jsonl").write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    again = audit_dpsgd(target=_target(), canary="crafted", threat="white-box", runs=12, dataset="user", seed=0,
                        execution=Execution(store=store, resume=True))
    assert again.lower_bound.epsilon == first.lower_bound.epsilon
    assert json.loads((store / "setup.json").read_text())["fingerprint"]


def test_the_loop_digest_is_the_same_in_another_process():
    code = "import torch_func_loop; from dpaudit.execution.fingerprint import code_digest; " \
           "print(code_digest(torch_func_loop.train))"
    other = subprocess.run([sys.executable, "-c", code], cwd=HERE, capture_output=True, text=True, check=True)
    assert other.stdout.strip() == code_digest(torch_func_loop.train)


def test_the_users_loss_inside_vmap_is_part_of_the_digest(monkeypatch):
    before = code_digest(torch_func_loop.train)
    changed = torch.func.vmap(torch.func.grad(lambda p, x, y: torch_func_loop._loss(p, x, y) * 2), in_dims=(None, 0, 0))
    monkeypatch.setattr(torch_func_loop, "per_example", changed)
    assert code_digest(torch_func_loop.train) != before


def test_a_class_is_digested_as_a_class_and_a_tensor_by_its_values():
    assert fingerprint(a=torch.Tensor) == fingerprint(a=torch.Tensor) != fingerprint(a=torch.nn.Linear)
    assert fingerprint(a=torch.zeros(3)) == fingerprint(a=np.zeros(3, dtype=np.float32)) != fingerprint(a=torch.ones(3))


class _Model:
    def forward(self, x):
        return x + 1


def test_editing_a_users_class_changes_the_digest(monkeypatch):
    before = fingerprint(model=_Model)
    monkeypatch.setattr(_Model, "forward", lambda self, x: x + 2)
    assert fingerprint(model=_Model) != before


def test_a_value_it_cannot_read_is_named_with_its_path_never_skipped():
    unreadable = torch.zeros(2, dtype=torch.bfloat16)

    def train(x, y, rng):
        return x + unreadable

    with pytest.raises(UnfingerprintableError, match=r"target → train → unreadable \(a torch\.Tensor: TypeError") as raised:
        fingerprint(target={"train": train})
    assert "\n" not in str(raised.value)
