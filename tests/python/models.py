"""The four PyTorch models of the differential tests and the CPU benchmark.

Each is small enough to run quickly on a CPU yet uses the operators of its family:
  resnet       Conv, BatchNorm, ReLU, MaxPool, residual Add, GlobalAveragePool, Flatten, Gemm (Linear)
  fpn          Conv, Resize (nearest and bilinear interpolate), Add, Concat
  mlp          Gemm/MatMul (Linear), GELU, LayerNorm, Softmax
  transformer  nn.TransformerEncoderLayer: MultiheadAttention (MatMul, Softmax, Reshape, Transpose),
               LayerNorm, GELU, Dropout (eval: identity)
Every model is exported with a dynamic batch dimension.
"""
import io

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    """A ResNet-18-style CNN (reduced width) for 3x64x64 images."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 7, 2, 3, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        self.layers = nn.Sequential(BasicBlock(32, 32, 1), BasicBlock(32, 64, 2), BasicBlock(64, 128, 2))
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class FPN(nn.Module):
    """An FPN-style neck over three feature maps: lateral 1x1 convs, top-down upsampling + add,
    3x3 output convs, and the levels resized to one size and concatenated."""

    def __init__(self, chans=(32, 64, 128), out=32):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, out, 1) for c in chans)
        self.output = nn.ModuleList(nn.Conv2d(out, out, 3, padding=1) for _ in chans)

    def forward(self, c3, c4, c5):
        p5 = self.lateral[2](c5)
        p4 = self.lateral[1](c4) + F.interpolate(p5, scale_factor=2.0, mode="nearest")
        p3 = self.lateral[0](c3) + F.interpolate(p4, size=c3.shape[-2:], mode="nearest")
        p3, p4, p5 = self.output[0](p3), self.output[1](p4), self.output[2](p5)
        size = p3.shape[-2:]
        up4 = F.interpolate(p4, size=size, mode="bilinear", align_corners=False)
        up5 = F.interpolate(p5, scale_factor=4.0, mode="bilinear", align_corners=False)
        return torch.cat([p3, up4, up5], dim=1)


class MLP(nn.Module):
    def __init__(self, d_in=256, hidden=512, classes=16):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x):
        x = F.gelu(self.norm(self.fc1(x)))
        x = F.gelu(self.fc2(x)) + x
        return torch.softmax(self.fc3(x), dim=-1)


class Transformer(nn.Module):
    """One nn.TransformerEncoderLayer (batch first, GELU) over a token sequence."""

    def __init__(self, d_model=128, heads=4, ff=256):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.1, activation="gelu",
                                                batch_first=True)

    def forward(self, x):
        return self.layer(x)


def _spec(name):
    """(model, example inputs at batch 2, input names, input shapes without the batch axis)."""
    torch.manual_seed(0)
    if name == "resnet":
        m = ResNet()
        shapes = [(3, 64, 64)]
    elif name == "fpn":
        m = FPN()
        shapes = [(32, 32, 32), (64, 16, 16), (128, 8, 8)]
    elif name == "mlp":
        m = MLP()
        shapes = [(256,)]
    elif name == "transformer":
        m = Transformer()
        shapes = [(32, 128)]
    else:
        raise ValueError(name)
    # BatchNorm statistics that are not the identity, so that folding them is tested.
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            with torch.no_grad():
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 2.0)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.2, 0.2)
    m.eval()
    names = [f"x{i}" for i in range(len(shapes))] if len(shapes) > 1 else ["x"]
    return m, names, shapes


MODELS = ("resnet", "fpn", "mlp", "transformer")


def export(name, path, dynamo=False, opset=17):
    """Exports model `name` to `path` with a dynamic batch axis; returns (input names, shapes).

    The TorchScript exporter runs without its constant folding, so the ONNX file keeps the
    BatchNormalization nodes (opforge folds them into the convolutions itself) and the shape
    arithmetic of the dynamic batch."""
    m, names, shapes = _spec(name)
    example = tuple(torch.randn(2, *s) for s in shapes)
    axes = {n: {0: "batch"} for n in names}
    axes["y"] = {0: "batch"}
    kwargs = dict(input_names=names, output_names=["y"], opset_version=opset)
    if not dynamo:
        kwargs["do_constant_folding"] = False
    if dynamo:
        batch = torch.export.Dim("batch", min=1, max=64)
        torch.onnx.export(m, example, path, dynamo=True, dynamic_shapes=tuple({0: batch} for _ in names), **kwargs)
    else:
        torch.onnx.export(m, example, path, dynamo=False, dynamic_axes=axes, **kwargs)
    return names, shapes
