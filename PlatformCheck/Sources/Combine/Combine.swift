// Combine exists on Apple platforms only. OpenCombine reimplements its API; this module gives it Combine's name, so
// that the product's `import Combine` finds it.
@_exported import OpenCombine
