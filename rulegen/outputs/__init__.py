"""Checking the outputs: pipeline stage after rendering (load -> validate -> render -> check
outputs -> test)."""
