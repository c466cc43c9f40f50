"""The grammar's facts and the drop-in: plain Python that every layer above imports."""
