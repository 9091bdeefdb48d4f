"""Eager and torch.compile baselines of a whole suite on a GPU, within one time budget.

``kernelwright bench baselines`` is the command and :mod:`.suite` its library side;
:mod:`.schedule` runs the phases (probe, parallel Inductor warm-up, serial timing under a global
deadline), :mod:`.worker` is what each child process does, :mod:`.table` turns the records into
the table and geometric means.
"""
