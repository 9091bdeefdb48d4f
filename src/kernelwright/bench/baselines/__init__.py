"""Eager and torch.compile baselines of a whole suite, within one time budget.

``kernelwright bench baselines`` is the command and :mod:`.suite` its library side;
:mod:`.measurer` times each (task, precision) through the harness (the same processes and clock
as every evaluation), :mod:`.table` turns the records into the table and geometric means.
"""
