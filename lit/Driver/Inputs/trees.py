"""Comparing output directories, for the cache checks of this folder."""
import filecmp


def same_tree(a, b):
    """True when directories `a` and `b` hold the same file names (one level,
    as pallasc writes its outputs) with the same bytes."""
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files,
                                           shallow=False)
    return not mismatch and not errors
