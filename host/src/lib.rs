//! sluice's host library (work in progress).
