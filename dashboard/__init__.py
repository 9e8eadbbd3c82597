"""Streamlit-side helpers of the dashboard: session state, cached resources, shared widgets.

Pages only lay out widgets; everything heavy lives in :mod:`simcore` and its on-disk store.
"""
