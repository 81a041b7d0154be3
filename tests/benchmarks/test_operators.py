"""The operators benchmark measures both ways on a small complex (no timing
assertions)."""


def test_step_times_of_both_ways(operators):
    data = operators.delaunay(60)
    times = operators.step_times(data, 1, steps=1)
    assert set(times) == {'shared', 'per layer'}
    assert all(t > 0 for t in times.values())
