"""Fixtures shared by the test folders, and one BLAS thread per pytest-xdist worker."""

import os

import pytest

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pytest_configure(config):
    """Under pytest-xdist, start each worker's BLAS with one thread (numpy is not imported yet here).

    Two workers whose BLAS pools each want both cores contend for them: the
    small matrix products of a user's loss (1797 rows, `numeric_gradients`)
    then took 8 ms a call instead of 0.7 ms, and the slow 20-seed audits of
    users' loops ran for half an hour. Dask's workers are limited the same way.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for variable in BLAS_THREADS:
            os.environ.setdefault(variable, "1")


@pytest.fixture
def one_torch_thread():
    """Train on one torch thread, as the audit's workers do, and restore the count after.

    Hundreds of small per-run steps stall when torch's threads contend for
    cores that other tests (or other processes) hold.
    """
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def quiet_opacus():
    """Silence the notices Opacus prints on every private model (secure RNG off, backward hooks, RDP orders)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Secure RNG turned off")
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        warnings.filterwarnings("ignore", message="Optimal order is the")
        yield
