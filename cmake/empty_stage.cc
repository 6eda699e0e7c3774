// Compiled into a stage library that has no sources yet (see hloc_stage_library).
