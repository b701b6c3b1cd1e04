#!/usr/bin/env python3
"""PyTorch (CPU, eager) training throughput of the Fashion-MNIST models that
`distflow train` builds, for comparison with bench/train_bench: the same
layers (with PyTorch's default initial values), Adam (lr 0.001) and batch 64,
over the first --examples training images read from the same gzipped IDX
files. The data is decoded once up front (no input pipeline is timed); only
the training loop is. Not part of CI: run by hand where python3-torch is installed.

    /usr/bin/python3 bench/torch_train_bench.py --examples 12800 --threads 2

(Debian's python3-torch installs for the system interpreter, /usr/bin/python3.)
"""
import argparse
import gzip
import time

import torch
from torch import nn

DATA = "/usr/share/datasets/fashion-mnist"


def load(examples):
    with gzip.open(f"{DATA}/train-images-idx3-ubyte.gz") as f:
        images = torch.frombuffer(bytearray(f.read()[16:]), dtype=torch.uint8).reshape(-1, 784)
    with gzip.open(f"{DATA}/train-labels-idx1-ubyte.gz") as f:
        labels = torch.frombuffer(bytearray(f.read()[8:]), dtype=torch.uint8)
    x = images[:examples].to(torch.float32) / 255.0
    y = labels[:examples].to(torch.int64)
    return x, y


def mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def cnn():
    return nn.Sequential(
        nn.Unflatten(1, (1, 28, 28)),
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(7 * 7 * 64, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--examples", type=int, default=12800)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    p.add_argument("--models", nargs="+", default=["mlp", "cnn"])
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    x, y = load(a.examples)
    for name in a.models:
        torch.manual_seed(1)
        model = {"mlp": mlp, "cnn": cnn}[name]()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = nn.CrossEntropyLoss()
        perm = torch.randperm(len(x))
        start = time.perf_counter()
        steps = 0
        for i in range(0, len(x), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            steps += 1
        seconds = time.perf_counter() - start
        print(f"pytorch {name}: {len(x) / seconds:.0f} examples/s "
              f"({steps} steps of 64 in {seconds:.2f} s, {torch.get_num_threads()} threads)")


if __name__ == "__main__":
    main()
