package runner

// MallocArenas counts the process's malloc arenas, for TestOneMallocArena.
var MallocArenas = mallocArenas
