"""Your own Opacus training script, audited white-box: two added lines (marked) put Dirac canaries into it.

A small CNN on the 8×8 digits, trained with `PrivacyEngine.make_private`
(full batches, σ = 10, C = 1, 10 steps: ε = 1.199 at δ = 1e-5 by Opacus' PRV
accountant). Outside an audit the two lines change nothing: `watch`
returns the optimizer, which steps exactly as before.

    PYTHONPATH=docs/examples dpaudit dpsgd --target opacus_dpsgd:target --canary dirac --threat white-box --runs 100
"""

import numpy as np
import torch
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.hook import watch  # added line 1 of 2
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer
from opacus import PrivacyEngine

SIGMA, CLIP, STEPS, LR = 10.0, 1.0, 10, 0.5


def train(x, y, rng):
    """Train the CNN with DP-SGD on (x, y), every random choice seeded from the numpy Generator `rng`."""
    seeds = rng.integers(0, 2**63 - 1, size=3)
    torch.manual_seed(int(seeds[0]))
    model = torch.nn.Sequential(torch.nn.Unflatten(1, (1, 8, 8)), torch.nn.Conv2d(1, 4, 3), torch.nn.Tanh(),
                                torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 10))
    data = torch.utils.data.TensorDataset(torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y))
    loader = torch.utils.data.DataLoader(data, batch_size=len(data), generator=torch.Generator().manual_seed(int(seeds[1])))
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=LR), data_loader=loader,
        noise_multiplier=SIGMA, max_grad_norm=CLIP, poisson_sampling=True,
        noise_generator=torch.Generator().manual_seed(int(seeds[2])),
    )
    optimizer = watch(optimizer)  # added line 2 of 2
    for _ in range(STEPS):
        for xb, yb in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy()


def losses(params, x, y):
    """Per-example losses (unused by Dirac canaries, which are scored from the iterates)."""
    return np.zeros(len(y))


def _claim() -> Claim:
    from opacus.accountants import PRVAccountant

    accountant = PRVAccountant()
    accountant.history = [(SIGMA, 1.0, STEPS)]
    with np.errstate(divide="ignore"):  # the PRV accountant takes log 0 at q = 1 and handles it
        return Claim(float(accountant.get_epsilon(1e-5)), 1e-5)


DIGITS = load_data("digits")
target = UserTrainer(train=train, losses=losses, x=DIGITS.x, y=DIGITS.y, claim=_claim(), name="opacus_cnn")
