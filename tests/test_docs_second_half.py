"""The Python blocks of the pages named l-z run as scripts (tests/test_docs.py runs a-k and says how): a file of
their own, so that the two halves run on different workers."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.test_docs import python_pages, run_page_blocks


@pytest.mark.parametrize("page", python_pages(second_half=True), ids=lambda p: p.name)
def test_python_blocks_of_the_second_half_run(page: Path, tmp_path: Path) -> None:
    run_page_blocks(page, tmp_path)
