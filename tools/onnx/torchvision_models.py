"""The torchvision classifiers braid is checked and benchmarked on, built and exported alike.

Shared by tools/onnx/compare_torchvision.py (braid's outputs against PyTorch's) and
tools/bench/inference_torchvision.py (inference speed and memory against PyTorch and
onnxruntime). Each model gets random weights from a seed (nothing is downloaded); its batch-norm
statistics are calibrated on a few random batches, so every layer sees normalized activations as
in a trained net; it is exported to ONNX in eval mode with the input named "data" and the output
"logits", by one of two exporters:
  dynamo       torch.onnx.export(..., dynamo=True), PyTorch 2.x's torch.export-based exporter and
               its default since 2.9, at its default opset (18 or newer: 2.15 writes 20); batch
               norms stay BatchNormalization nodes. The default where PyTorch has it.
  torchscript  the legacy TorchScript exporter (dynamo=False on PyTorch 2.x; PyTorch 1.x's only
               one) at opset 13, which folds each batch norm into the convolution before it.

    model, size = build_model("resnet18", seed=0)
    export_onnx(model, torch.zeros(8, 3, size, size), "resnet18_b8.onnx")  # default exporter
    export_onnx(model, torch.zeros(1, 3, size, size), "resnet18.onnx", exporter="torchscript")

Needs PyTorch and torchvision (Debian: python3-torch, python3-torchvision).
"""
import inspect

import torch
import torchvision

MODELS = {  # name: (constructor keyword arguments, input size)
    "resnet18": ({}, 224),
    "resnet50": ({}, 224),
    "densenet121": ({}, 224),
    "googlenet": ({"aux_logits": False, "init_weights": True}, 224),
    "inception_v3": ({"aux_logits": False, "init_weights": True}, 299),
    "mobilenet_v2": ({}, 224),
    "squeezenet1_1": ({}, 224),
}

INPUT_NAME = "data"
OUTPUT_NAME = "logits"


def parse_model_names(text):
    """The comma-separated names of `text`; raises ValueError naming any unknown one."""
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise ValueError(f"unknown models {unknown}; known: {', '.join(MODELS)}")
    return names


def build_model(name, seed):
    """(model in eval mode, input height and width)."""
    kwargs, size = MODELS[name]
    torch.manual_seed(seed)
    model = getattr(torchvision.models, name)(weights=None, **kwargs)
    calibrate_batch_norms(model, size, seed)
    return model.eval(), size


def calibrate_batch_norms(model, size, seed):
    """Running statistics averaged over three random batches of 4 (train mode, no gradients)."""
    batch_norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not batch_norms:
        return
    for bn in batch_norms:
        bn.reset_running_stats()
        bn.momentum = None  # a cumulative average
    generator = torch.Generator().manual_seed(seed + 1)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.rand(4, 3, size, size, generator=generator) * 2 - 1)


def has_dynamo_exporter():
    """Whether this PyTorch's torch.onnx.export takes dynamo= (PyTorch 2.x)."""
    return "dynamo" in inspect.signature(torch.onnx.export).parameters


def default_exporter():
    return "dynamo" if has_dynamo_exporter() else "torchscript"


EXPORTERS = ("dynamo", "torchscript")


def export_onnx(model, example_input, path, exporter=None):
    """Writes `model` as ONNX with example_input's (fixed) shape to `path`; `exporter` is one of
    EXPORTERS (None: default_exporter())."""
    exporter = exporter or default_exporter()
    if exporter not in EXPORTERS:
        raise ValueError(f"unknown exporter {exporter!r}; known: {', '.join(EXPORTERS)}")
    names = {"input_names": [INPUT_NAME], "output_names": [OUTPUT_NAME]}
    with torch.no_grad():
        if exporter == "dynamo":
            if not has_dynamo_exporter():
                raise ValueError(f"PyTorch {torch.__version__} has no dynamo exporter")
            torch.onnx.export(model, (example_input,), path, dynamo=True, verbose=False, **names)
        else:
            legacy = {"dynamo": False} if has_dynamo_exporter() else {}
            torch.onnx.export(model, (example_input,), path, opset_version=13,
                              do_constant_folding=True, **legacy, **names)
