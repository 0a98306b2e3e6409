"""Runs played a group at a time are still handed back one by one, in order, with the progress counted in runs."""

from dpaudit.execution.backends import Backend
from dpaudit.execution.runs import run_groups


def test_each_run_of_each_group_is_finished_on_its_own():
    played, finished, progress = [], [], []

    def play(group):
        played.append(group)
        return [10 * index for index in group]

    run_groups(play, [4, 0, 7, 2, 9, 5, 1], size=3, backend=Backend(), finish=lambda i, v: finished.append((i, v)),
               progress=progress.append)
    assert played == [(4, 0, 7), (2, 9, 5), (1,)]
    assert finished == [(4, 40), (0, 0), (7, 70), (2, 20), (9, 90), (5, 50), (1, 10)]
    assert progress == [1] * 7
