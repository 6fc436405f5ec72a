"""Closed-form models of the seeds, as plain functions (no simulation).

``packet_slicing``: the Packet Slicing seed's incast probability, goodput and
optimal slicing ratio (its equations 1-11).
"""
