"""Verification of the host interface: behavioural device model, loopback bench."""
