"""Finance: GPU spend from billing exports (FOCUS, AWS CUR 2.0, Cost Explorer), utilization, and the
spend review. One module per source; engines (readers, review) are plain Python + pandas, no ORM."""
