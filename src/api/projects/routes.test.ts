import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { parseCreateProject, projectResource, serializeProject } from './routes.js';

function problemOf(body: unknown): string {
  try {
    parseCreateProject(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).message;
  }
  throw new Error('expected a 400');
}

describe('parseCreateProject', () => {
  it('accepts a minimal body and defaults the branch to main', () => {
    expect(parseCreateProject({ name: 'web', repo_url: ' https://git.example/web.git ' })).toEqual({
      name: 'web', repo_url: 'https://git.example/web.git', default_branch: 'main',
    });
    expect(parseCreateProject({ name: 'a-1', repo_url: '/srv/r.git', default_branch: 'trunk', description: 'd' })).toEqual({
      name: 'a-1', repo_url: '/srv/r.git', default_branch: 'trunk', description: 'd',
    });
  });

  it('takes the credentials Secret by name and puts it in spec.gitCredentialsSecretRef', () => {
    const request = parseCreateProject({ name: 'web', repo_url: 'ssh://git@git.example/web.git', credentials_secret: 'web-git' });
    expect(request).toEqual({ name: 'web', repo_url: 'ssh://git@git.example/web.git', default_branch: 'main', credentials_secret: 'web-git' });
    const project = projectResource(request, 'default');
    expect(project.spec.gitCredentialsSecretRef).toEqual({ name: 'web-git' });
    expect(serializeProject(project).credentials_secret).toBe('web-git');
  });

  it.each([
    [null, 'JSON object'],
    [[], 'JSON object'],
    [{ repo_url: 'x' }, 'name is required'],
    [{ name: 'Web', repo_url: 'x' }, 'DNS-1123 label'],
    [{ name: 'web_1', repo_url: 'x' }, 'DNS-1123 label'],
    [{ name: '-web', repo_url: 'x' }, 'DNS-1123 label'],
    [{ name: 'a'.repeat(64), repo_url: 'x' }, 'DNS-1123 label'],
    [{ name: 'web' }, 'repo_url is required'],
    [{ name: 'web', repo_url: '   ' }, 'repo_url is required'],
    [{ name: 'web', repo_url: 'x\ny' }, 'control characters'],
    [{ name: 'web', repo_url: 'x', default_branch: 'a..b' }, 'not a valid branch name'],
    [{ name: 'web', repo_url: 'x', default_branch: 3 }, 'default_branch must be a string'],
    [{ name: 'web', repo_url: 'x', description: 1 }, 'description must be a string'],
    [{ name: 'web', repo_url: 'x', repoUrl: 'y' }, 'unknown field(s): repoUrl'],
    [{ name: 'web', repo_url: 'x', credentials_secret: 'My_Secret' }, 'credentials_secret "My_Secret" must be the name of a Secret'],
    [{ name: 'web', repo_url: 'x', credentials_secret: 3 }, 'credentials_secret 3 must be the name of a Secret'],
    // what the controllers could never use was accepted (201) to fail later
    [{ name: 'web', repo_url: '\u001b[31m' }, 'control characters'],
    [{ name: 'web', repo_url: 'x' }, 'repo_url: invalid repository URL x: expected an absolute path or a file://, http(s):// or ssh URL'],
    [{ name: 'web', repo_url: '--upload-pack=touch /tmp/p' }, 'expected an absolute path'],
    [{ name: 'web', repo_url: 'ext::sh -c touch% /tmp/p' }, 'invalid repository URL'],
    [{ name: 'web', repo_url: 'fd::17' }, 'invalid repository URL'],
    [{ name: 'web', repo_url: 'http://[::1' }, 'not a URL'],
    [{ name: 'web', repo_url: '../../etc/passwd' }, 'expected an absolute path'],
    [{ name: 'web', repo_url: 'ssh://-oProxyCommand=x/y' }, 'a host or user name cannot begin with "-"'],
    [{ name: 'web', repo_url: '-x@host:y' }, 'a host or user name cannot begin with "-"'],
    [{ name: 'web', repo_url: 'git@-host:y' }, 'a host or user name cannot begin with "-"'],
  ])('rejects %j', (body, message) => {
    expect(problemOf(body)).toContain(message);
  });

  it('names every problem at once', () => {
    const message = problemOf({ name: 'Bad Name' });
    expect(message).toContain('DNS-1123');
    expect(message).toContain('repo_url is required');
  });
});

describe('serializeProject', () => {
  it('shows a just-created project with empty status fields', () => {
    const project = projectResource({ name: 'web', repo_url: '/r.git', default_branch: 'main' }, 'default');
    project.metadata.uid = '11111111-1111-4111-8111-111111111111';
    project.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
    expect(serializeProject(project)).toEqual({
      id: '11111111-1111-4111-8111-111111111111', name: 'web', namespace: 'default', repo_url: '/r.git', default_branch: 'main',
      description: null, credentials_secret: null, default_branch_sha: null, manifest: null, triggers: [], trigger_errors: [], conditions: [],
      created_at: '2026-01-01T00:00:00Z',
    });
  });

  it('shows repo_url without userinfo or credential query parameters (the spec keeps them)', () => {
    const url = 'https://bot:pa55word@gitlab.example/g/web.git?private_token=glpat-SECRET&ref=main';
    const project = projectResource({ name: 'web', repo_url: url, default_branch: 'main' }, 'default');
    expect(serializeProject(project).repo_url).toBe('https://***@gitlab.example/g/web.git?private_token=***&ref=main');
    expect(project.spec.repoUrl).toBe(url);
  });

  it('maps the status and sorts triggers by slug', () => {
    const project = projectResource({ name: 'web', repo_url: '/r.git', default_branch: 'main' }, 'default');
    project.status = {
      defaultBranchSha: 'a'.repeat(40),
      manifest: { file: 'svc.yaml', version: 2, valid: false, issues: [{ path: 'agents', message: 'required' }] },
      triggerErrors: [{ index: 2, slug: 'bad', messages: ['cron is required'] }],
    };
    const out = serializeProject(project, [{ slug: 'b', type: 'cron' }, { slug: 'a', type: 'webhook' }]);
    expect(out.manifest).toEqual({ file: 'svc.yaml', version: 2, valid: false, issues: [{ path: 'agents', message: 'required' }] });
    expect(out.default_branch_sha).toBe('a'.repeat(40));
    expect(out.triggers.map((t) => t.slug)).toEqual(['a', 'b']);
    expect(out.trigger_errors).toEqual([{ index: 2, slug: 'bad', messages: ['cron is required'] }]);
  });
});
