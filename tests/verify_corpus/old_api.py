"""Feature engineering with deprecated torch functions."""
import torch


def features(a, b, c):
    pairwise = torch.ger(a, b)
    product = torch.chain_matmul(pairwise, c, c.t())
    grid = torch.range(0, 4)
    return pairwise, product, grid


def main():
    torch.manual_seed(0)
    a, b = torch.randn(3), torch.randn(4)
    c = torch.randn(4, 2)
    pairwise, product, grid = features(a, b, c)
    print(f"product sum {product.sum().item():.5f} grid {grid.tolist()}")


if __name__ == "__main__":
    main()
