// Placeholder entry so the build has a target; the manifest issue replaces it.
console.log('svc 0.1.0');
