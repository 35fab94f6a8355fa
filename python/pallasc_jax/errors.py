"""The exporter's one error type: what could not be translated, and where."""

from __future__ import annotations


class ExportError(Exception):
  """A kernel (or its pallas_call) that the exporter cannot translate.

  `where` is the Python `file:line:col` of the JAX equation at fault (empty
  when unknown); the message names the primitive or parameter.
  """

  def __init__(self, message: str, where: str = ""):
    super().__init__(message)
    self.message = message
    self.where = where

  def __str__(self) -> str:
    return f"{self.where}: error: {self.message}" if self.where else (
        f"error: {self.message}")
