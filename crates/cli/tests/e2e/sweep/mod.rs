//! `herd sweep` against the mock server and scripted servers: autobench's columns (`columns`),
//! what a step's level is (`levels`: rates, connections, a workload file's iterations or users),
//! and how a sweep ends or refuses to begin (`ends`).

mod columns;
mod ends;
mod levels;
