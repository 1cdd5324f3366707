// Import fences of DESIGN.md §5. Every non-test source file belongs to an "area"
// (src/<dir>, controllers/<kind>, daemon, ...). Relative imports are resolved to the
// area they land in and checked against the table below; bare package imports are
// checked against the package fences. Test files are exempt.
import path from 'node:path';

const KUBE_CLIENT = '@kubernetes/client-node';

/** area -> { allow?: areas it may import (own area always allowed), deny?: areas it may not } */
export const AREA_RULES = {
  'src/lib': { allow: [] },
  'src/resources': { allow: ['src/lib'] },
  'src/manifest': { allow: ['src/lib'] },
  'src/triggers': { allow: ['src/lib', 'src/manifest', 'src/resources'] },
  // Session admission and the one builder of a new Session: pure decisions over resources, no I/O.
  'src/sessions': { allow: ['src/lib', 'src/resources', 'src/manifest'] },
  // The merge claim of a change request, pure: shared by the API (its merges) and the ChangeRequest controller (settling them).
  'src/changerequests': { allow: ['src/lib', 'src/resources'] },
  'src/git': { allow: ['src/lib'] },
  'src/kube': { allow: ['src/lib', 'src/resources'] },
  'src/runtime': { allow: ['src/lib', 'src/resources', 'src/kube'] },
  'src/localcluster': { allow: ['src/lib'] },
  'src/crdgen': { allow: ['src/lib', 'src/resources'] },
  // Sandbox providers: may talk to Kubernetes, never to the API, the CLI or a controller.
  'src/sandbox': { allow: ['src/lib', 'src/resources', 'src/kube'] },
  'src/api': { deny: ['controllers/*', 'src/cli', 'src/main', 'daemon', 'src/localcluster', 'src/crdgen'] },
  'src/cli': { deny: ['controllers/*', 'src/api', 'daemon', 'src/kube', 'src/runtime', 'src/localcluster'] },
  'src/main': { deny: [] },
  'controllers/*': { deny: ['controllers/*', 'src/api', 'src/cli', 'src/main', 'daemon', 'src/localcluster'] },
  daemon: { allow: ['src/lib', 'src/resources'] },
  // the dashboard talks to the API over HTTP only; it may share the REST shapes of src/lib
  web: { allow: ['src/lib'] },
};

/** package -> areas that may import it */
export const PACKAGE_RULES = {
  [KUBE_CLIENT]: ['src/kube'],
};

export function areaOf(relPath) {
  const parts = relPath.split(path.sep).join('/').split('/');
  if (parts[0] === 'src' && parts.length > 2) return `src/${parts[1]}`;
  if (parts[0] === 'controllers' && parts.length > 2) return `controllers/${parts[1]}`;
  if (parts[0] === 'daemon') return 'daemon';
  if (parts[0] === 'web') return 'web';
  return null;
}

function matches(pattern, area) {
  if (pattern.endsWith('/*')) return area.startsWith(pattern.slice(0, -1));
  return pattern === area;
}

function ruleFor(area) {
  if (AREA_RULES[area]) return AREA_RULES[area];
  for (const [pattern, rule] of Object.entries(AREA_RULES)) if (matches(pattern, area)) return rule;
  return null;
}

export function violation(fromArea, target) {
  if (!fromArea) return null;
  if (target.package) {
    const allowed = PACKAGE_RULES[target.package];
    if (allowed && !allowed.some((p) => matches(p, fromArea))) {
      return `${fromArea} may not import ${target.package} (only ${allowed.join(', ')} may)`;
    }
    return null;
  }
  const toArea = target.area;
  if (!toArea || toArea === fromArea) return null;
  const rule = ruleFor(fromArea);
  if (!rule) return null;
  if (rule.allow && !rule.allow.some((p) => matches(p, toArea))) {
    return `${fromArea} may import only ${rule.allow.length ? rule.allow.join(', ') : 'itself'}, not ${toArea}`;
  }
  if (rule.deny && rule.deny.some((p) => matches(p, toArea))) {
    return `${fromArea} may not import ${toArea}`;
  }
  return null;
}

function packageName(spec) {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

const rule = {
  meta: { type: 'problem', schema: [], docs: { description: 'DESIGN.md §5 import fences' } },
  create(context) {
    const filename = context.filename ?? context.getFilename();
    const root = context.cwd ?? process.cwd();
    const rel = path.relative(root, filename);
    if (/\.test\.[cm]?[jt]s$/.test(rel)) return {};
    const fromArea = areaOf(rel);
    if (!fromArea) return {};
    function check(node, source) {
      if (!source || typeof source.value !== 'string') return;
      const spec = source.value;
      let target;
      if (spec.startsWith('.')) {
        target = { area: areaOf(path.relative(root, path.resolve(path.dirname(filename), spec))) };
      } else if (!spec.startsWith('node:')) {
        target = { package: packageName(spec) };
      } else return;
      const message = violation(fromArea, target);
      if (message) context.report({ node, message: `import fence: ${message} (DESIGN.md §5)` });
    }
    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source),
    };
  },
};

export default { rules: { fences: rule } };
