//! YUI Tauri shell.
