"""The sampling benchmark's pieces on a small complex (no timing assertions)."""
import torch


def test_speed_memory_and_denoising(sampling, tmp_path):
    data = sampling.flow_complex(300, noise=0.5)
    assert torch.allclose(data.y.std(), torch.tensor(1.0))
    speed = sampling.sampler_speed(data, [16, 32], [5, 5], repeats=2)
    assert [row['batch_size'] for row in speed] == [16, 32]
    assert all(row['sample'] > 0 and row['collate'] > 0 for row in speed)
    path = tmp_path / 'complex.pt'
    torch.save(data, path)
    memory = sampling.peak_memory(str(path), 16, [5, 5])
    assert memory['batch_mb'] > 0 and memory['peak_mb'] >= 0
    assert 16 <= memory['simplices'] <= data.num_simplices(1)
    task = sampling.denoising(data, [5, 5], steps=3, batch_size=64)
    assert task['steps'] == 3 and task['mse'] > 0
    assert abs(task['noise_mse'] - 0.25) < 0.1


def test_citation_exactness(sampling, shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv('TGSAN_SHARED_DATA', str(shared_data))
    exact = sampling.citation_exactness(tmp_path / 'citation_complex')
    assert exact['simplices'] == 1474
    assert exact['max_abs_diff'] < 1e-9 * max(exact['scale'], 1.0)
