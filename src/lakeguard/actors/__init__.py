"""The actors on the store: the gate, keys, rejections, catalog apply and watch, alerting
(the highest layer)."""
