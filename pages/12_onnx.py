"""Lab 12: export the layer to ONNX, run it in ONNX Runtime and check it against PyTorch."""

from components.labs import onnx_export
from components.page import setup_page

setup_page("nav.lab.onnx", "📦")
onnx_export.render()
