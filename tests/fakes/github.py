"""A fake GitHub REST API: a real HTTP server on 127.0.0.1 (random port, in a thread) that records
every call. It serves what the bot uses and nothing else.

Start and stop::

    with FakeGitHub() as gh:          # or gh = FakeGitHub().start(); ...; gh.stop()
        os.environ["GITHUB_API_URL"] = gh.url      # http://127.0.0.1:PORT

Seed state (all return the stored JSON object, which later calls mutate)::

    gh.add_repo("octo/repo", default_branch="main")
    gh.set_permission("octo/repo", "alice", "write")   # admin|maintain|write|triage|read|none; unset -> 404
    gh.add_issue("octo/repo", 1, title="Bug", body="...", user="alice")
    gh.add_pull("octo/repo", 2, head_ref="feature", head_sha="abc", base_ref="main",
                head_repo="fork/repo", maintainer_can_modify=False)   # a PR is also issue #2
    gh.add_comment("octo/repo", 1, "@bot explain", user="alice")       # issue/PR conversation comment
                                        # (comment_id=N to match a recorded webhook payload)
    gh.add_review_comment("octo/repo", 2, "@bot fix", user="alice", path="a.py", line=3,
                          diff_hunk="@@ -1,3 +1,3 @@\n-old\n+new")     # in_reply_to=ID joins a thread
    gh.add_pull_file("octo/repo", 2, "a.py", patch="@@ -1 +1 @@\n-x\n+y")   # GET .../pulls/2/files
    gh.add_review("octo/repo", 2, "Needs tests", user="carol", state="CHANGES_REQUESTED")
    gh.add_check_run("octo/repo", head_sha, "tests", conclusion="failure", log="...\n##[error]boom",
                     annotations=[{"path": "a.py", "start_line": 3, "message": "assert 1 == 2"}])
                                     # an Actions job: its log behind /actions/jobs/{id}/logs
    url = gh.add_attachment(png_bytes)          # {gh.url}/user-attachments/assets/<uuid> (token needed)
    gh.add_content("octo/repo", "docs/a.png", png_bytes)   # GET .../contents/docs/a.png (raw)
    gh.add_label("octo/repo", "bug")             # GET .../labels; gh.labels_on("octo/repo", 1) -> ["bug", ...]
    gh.fail_next("POST", r"/issues/\\d+/comments$", status=403, headers={"retry-after": "1"})
    gh.fail_next("POST", r"/issues/\\d+/comments$", status=502, after=True)  # stored, then a 502
    gh.fail_next("POST", r"/issues/\\d+/comments$", status=0)   # connection dropped, no answer
    gh.expire_tokens()                # installation tokens issued so far answer 401 from now on

Read what happened::

    gh.calls                         # [Call(method, path, body, headers, at)] in arrival order
    gh.calls_to("PATCH", r"/issues/comments/\\d+$")
    gh.comments("octo/repo", 1)      # the thread's comments as they are now (edits applied)
    gh.reactions                     # [{"subject": "issue_comment"|"review_comment"|"issue", "comment_id", "content"}]
    gh.pulls("octo/repo")            # PRs, including those the bot created
    gh.file_on("octo/repo", "topic", "REVIEW.md")   # a file's text on a branch (the bot's PUTs applied)
    gh.branches("octo/repo")         # {branch: head sha}
    gh.add_branch("octo/repo", "topic")   # at the default branch's head
    gh.merge_pull("octo/repo", 3); gh.close_pull("octo/repo", 4)   # as a person would, on GitHub
    gh.wait_for(lambda: ..., timeout=20)

Routes: POST /app/installations/{id}/access_tokens (needs `Authorization: Bearer <jwt>`; when
`app_id` is given the JWT's iss must match, when `public_key` is given its signature is checked);
GET /repos/{o}/{r}, /repos/{o}/{r}/installation, /repos/{o}/{r}/collaborators/{u}/permission;
POST /repos/{o}/{r}/issues (as the bot), GET /repos/{o}/{r}/issues (the open ones, newest first), GET /repos/{o}/{r}/issues/{n} (410 once `gh.delete_issue`
removed it; `gh.close_issue` closes one), GET|POST /repos/{o}/{r}/issues/{n}/comments, POST .../issues/{n}/reactions,
GET|PATCH|DELETE /repos/{o}/{r}/issues/comments/{id} (DELETE: 204, then 404), POST .../issues/comments/{id}/reactions;
GET|PATCH|DELETE /repos/{o}/{r}/pulls/comments/{id}, GET|POST .../pulls/comments/{id}/reactions
(GET: the bot's and `react_as` people's, `content`, `per_page`, `page`),
GET /repos/{o}/{r}/pulls/{n}/comments, POST /repos/{o}/{r}/pulls/{n}/comments/{id}/replies;
GET /repos/{o}/{r}/pulls/{n}, GET|POST /repos/{o}/{r}/pulls (list filters state, head, base);
GET /repos/{o}/{r}/pulls/{n}/files, /pulls/{n}/reviews, /commits/{ref}/check-runs,
POST /repos/{o}/{r}/pulls/{n}/reviews (422 for a comment on a path or line the diff does not show, as
GitHub; read back with `gh.submitted_reviews(repo, n)`, each with its `_comments`),
/check-runs/{id}/annotations, /actions/runs/{id}/jobs, /actions/jobs/{id}/logs (302 to a blob),
GET /repos/{o}/{r}/labels, POST /repos/{o}/{r}/issues/{n}/labels (a name the repository lacks is
created, as GitHub does: `gh.label_names(repo)` shows it),
/contents/{path} (`ref`: a branch, else the default branch's files; a folder answers its listing,
a symlink its target's file), PUT /repos/{o}/{r}/contents/{path} (on `branch`, with the current
`sha` of a file replaced: 409 stale, 422 missing), DELETE .../contents/{path} (on `branch`, its current
`sha`), PATCH /repos/{o}/{r}/pulls/{n} (title, body, state), GET /repos/{o}/{r}/git/ref/heads/{branch},
POST /repos/{o}/{r}/git/refs (a branch at a branch's head; 422 when it exists); GET|POST
/repos/{o}/{r}/commits/{sha}/comments (POST: 422 for a `path` the commit did not change, when
`gh.set_commit_files(repo, sha, paths, patches)` said which it did, and for a `position` outside the
path's patch; a comment placed by `position` gets the file's `line` GitHub derives; read back with
`gh.commit_comments(repo, sha)`), GET /repos/{o}/{r}/commits/{sha} (the commit with its `files` as
diff entries, each with its `patch` when `set_commit_files` gave one, `per_page`/`page` paging the
files as GitHub does; 422 for a commit the fake does not know),
GET /repos/{o}/{r}/commits (`path`: the commits `gh.add_commit` says changed it, newest first); GET /user-attachments/assets/{id} and /user-attachments/files/{id}/{name} (302
to a signed blob URL, as for a private repository); GET /_blobs/... (the log and image store: no
token, as its signed URL is the credential);
GET /rate_limit; POST /graphql (GitHub's GraphQL API, not in the REST description: the pull request's
`reviewThreads` and the `resolveReviewThread` mutation, answered in GitHub's documented shapes;
`gh.resolve_thread(repo, comment_id, by="alice")` resolves one as a person would, and
`gh.thread_resolved(repo, comment_id)` says by whom). Every route but access_tokens, rate_limit and the blobs needs an installation
token this server issued (`token X` or `Bearer X`), unless `require_auth=False`.
A GET answered with a list is paginated as GitHub does (`per_page`, default 30, `page`, a
`Link: <…>; rel="prev", <…>; rel="next", <…>; rel="last", <…>; rel="first"` header naming those
that exist); `gh.links_instead(r"/issues/1/comments$", lambda url, page: ...)` answers a hostile
Link header in place of GitHub's (a `next` that never ends, a link to another host).
"""
from __future__ import annotations

import base64
import copy
import hashlib
import itertools
import json
import re
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import jwt

from tests.fakes.openapi_check import ConformanceChecker, projected, shaped

# one checker for every fake in the process, so each operation's validators are built once
SHARED_CHECKER = ConformanceChecker()
# every fake made in this process, so a test can check the ones it started (tests/conftest.py)
CREATED: list[FakeGitHub] = []


@dataclass
class Call:
    method: str
    path: str
    body: object
    headers: dict = field(default_factory=dict)
    at: float = field(default_factory=time.time)  # arrival, epoch seconds


class FakeGitHub:
    def __init__(self, app_id: str | None = None, public_key: str | None = None, require_auth: bool = True,
                 token_ttl_s: float = 3600, check_conformance: bool = True):
        self.app_id, self.public_key, self.require_auth = app_id, public_key, require_auth
        # each exchange off GitHub's published REST description, as one line
        self.conformance_errors: list[str] = []
        self._checker = SHARED_CHECKER if check_conformance else None
        CREATED.append(self)
        self.token_ttl_s = token_ttl_s  # lifetime of the installation tokens it mints
        self.calls: list[Call] = []
        self.reactions: list[dict] = []
        self.tokens: dict[str, int] = {}  # token -> installation id
        self._repos: dict[str, dict] = {}
        self._lock = threading.RLock()
        self._ids = itertools.count(1001)
        self._failures: list[dict] = []
        self._flaky: dict | None = None  # flaky_writes(): random 502s and secondary rate limits
        self.injected = {"502": 0, "rate_limit": 0}
        self._kills: list[dict] = []  # kill_on(): kill the service at a chosen call
        self._blobs: dict[str, tuple[bytes, str]] = {}  # key -> (body, content type)
        self._links_instead: list[tuple[re.Pattern, Callable[[str, int], str]]] = []  # links_instead()
        self._attachments: dict[str, str] = {}  # attachment path -> blob key
        self._server: ThreadingHTTPServer | None = None
        self._routes = _routes(self)

    # ---- lifecycle
    def start(self) -> FakeGitHub:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # ---- seeding
    def add_repo(self, full_name: str, default_branch: str = "main", private: bool = False) -> dict:
        owner, name = full_name.split("/")
        repo = {"id": next(self._ids), "name": name, "full_name": full_name, "private": private,
                "owner": _user(owner, "Organization"), "default_branch": default_branch,
                "html_url": f"https://github.com/{full_name}", "clone_url": f"https://github.com/{full_name}.git",
                "node_id": f"R_{name}", "url": f"https://api.github.com/repos/{full_name}"}
        repo = shaped("full-repository", repo)
        contents: dict[str, bytes] = {}  # the default branch's files (add_content)
        self._repos[full_name] = {"repo": repo, "perms": {}, "issues": {}, "comments": {},
                                  "review_comments": {}, "pulls": {}, "files": {}, "reviews": {},
                                  "check_runs": [], "jobs": {}, "contents": contents,
                                  "branches": {default_branch: {"sha": _commit_sha(full_name, default_branch),
                                                                "contents": contents}}}
        return repo

    def set_permission(self, full_name: str, login: str, permission: str) -> None:
        legacy = {"maintain": "write", "triage": "read"}.get(permission, permission)
        self._state(full_name)["perms"][login] = {"permission": legacy, "role_name": permission,
                                                  "user": _user(login)}

    def add_issue(self, full_name: str, number: int, title: str = "An issue", body: str = "",
                  user: str = "octocat") -> dict:
        issue = {"id": next(self._ids), "number": number, "title": title, "body": body, "state": "open",
                 "user": _user(user), "url": f"{self._api(full_name)}/issues/{number}",
                 "html_url": f"https://github.com/{full_name}/issues/{number}", "comments": 0,
                 "node_id": f"I_{number}", "created_at": _now(), "updated_at": _now()}
        issue = shaped("issue", issue)
        self._state(full_name)["issues"][number] = issue
        return issue

    def close_issue(self, full_name: str, number: int) -> None:
        with self._lock:
            self._state(full_name)["issues"][number].update(state="closed", closed_at=_now())

    def delete_issue(self, full_name: str, number: int) -> None:
        """Deleted by an admin: GitHub answers 410 Gone for it from now on."""
        with self._lock:
            state = self._state(full_name)
            del state["issues"][number]
            state.setdefault("deleted_issues", set()).add(number)

    def issues(self, full_name: str) -> dict[int, dict]:
        with self._lock:
            return {number: dict(issue) for number, issue in self._state(full_name)["issues"].items()}

    def add_pull(self, full_name: str, number: int, head_ref: str = "feature", head_sha: str = "0" * 40,
                 base_ref: str | None = None, head_repo: str | None = None, maintainer_can_modify: bool = False,
                 title: str = "A pull request", body: str = "", user: str = "octocat") -> dict:
        state = self._state(full_name)
        issue = self.add_issue(full_name, number, title, body, user)
        issue["pull_request"] = {"url": f"{self._api(full_name)}/pulls/{number}",
                                 "html_url": f"https://github.com/{full_name}/pull/{number}",
                                 "diff_url": f"https://github.com/{full_name}/pull/{number}.diff",
                                 "patch_url": f"https://github.com/{full_name}/pull/{number}.patch"}
        head_full = head_repo or full_name
        pull = {"id": next(self._ids), "number": number, "title": title, "body": body, "state": "open",
                "user": _user(user), "draft": False, "maintainer_can_modify": maintainer_can_modify,
                "html_url": f"https://github.com/{full_name}/pull/{number}",
                "url": f"{self._api(full_name)}/pulls/{number}",
                "head": {"ref": head_ref, "sha": head_sha, "label": f"{head_full.split('/')[0]}:{head_ref}",
                         "repo": {"full_name": head_full, "fork": head_full != full_name}},
                "base": {"ref": base_ref or state["repo"]["default_branch"], "sha": "0" * 40,
                         "repo": {"full_name": full_name}}, "node_id": f"PR_{number}"}
        pull = shaped("pull-request", pull)
        state["pulls"][number] = pull
        return pull

    def add_comment(self, full_name: str, number: int, body: str, user: str = "octocat",
                    user_type: str = "User", association: str = "OWNER", comment_id: int | None = None) -> dict:
        cid = comment_id or next(self._ids)
        comment = {"id": cid, "body": body, "user": _user(user, user_type), "author_association": association,
                   "url": f"{self._api(full_name)}/issues/comments/{cid}",
                   "html_url": f"https://github.com/{full_name}/issues/{number}#issuecomment-{cid}",
                   "issue_url": f"{self._api(full_name)}/issues/{number}",
                   "created_at": _now(), "updated_at": _now(), "node_id": f"IC_{cid}"}
        comment = shaped("issue-comment", comment)
        self._state(full_name)["comments"][cid] = comment
        return comment

    def add_review_comment(self, full_name: str, number: int, body: str, user: str = "octocat",
                           path: str = "README.md", line: int | None = 1, in_reply_to: int | None = None,
                           comment_id: int | None = None, diff_hunk: str = "@@ -1 +1 @@",
                           review_id: int = 1, association: str = "OWNER", user_type: str = "User") -> dict:
        cid = comment_id or next(self._ids)
        comment = {"id": cid, "body": body, "user": _user(user, user_type), "path": path, "line": line,
                   "original_line": line or 1, "side": "RIGHT", "subject_type": "line",
                   "in_reply_to_id": in_reply_to, "pull_request_review_id": review_id, "diff_hunk": diff_hunk,
                   "author_association": association,
                   "url": f"{self._api(full_name)}/pulls/comments/{cid}",
                   "html_url": f"https://github.com/{full_name}/pull/{number}#discussion_r{cid}",
                   "pull_request_url": f"{self._api(full_name)}/pulls/{number}",
                   "created_at": _now(), "updated_at": _now(), "_number": number, "node_id": f"PRRC_{cid}",
                   "commit_id": "0" * 40, "original_commit_id": "0" * 40}
        if in_reply_to is None:  # GitHub leaves the field out of a comment that starts a thread
            del comment["in_reply_to_id"]
        comment = shaped("pull-request-review-comment", comment)
        self._state(full_name)["review_comments"][cid] = comment
        return comment

    def review_comments_of(self, full_name: str, number: int) -> list[dict]:
        """A pull request's review comments (replies included) as they are now."""
        with self._lock:
            return [dict(c) for c in self._state(full_name)["review_comments"].values() if c["_number"] == number]

    def resolve_thread(self, full_name: str, comment_id: int, by: str | None) -> None:
        """The review thread that `comment_id` starts, resolved (by a person's login; None: the bot)."""
        with self._lock:
            self._state(full_name).setdefault("resolved", {})[comment_id] = by

    def react_as(self, full_name: str, comment_id: int, content: str, login: str) -> None:
        """A person's reaction to a review comment (what GET .../pulls/comments/{id}/reactions lists)."""
        with self._lock:
            self._state(full_name)["review_comments"][comment_id]  # KeyError: no such comment
            self._state(full_name).setdefault("people_reactions", {}).setdefault(comment_id, []).append(
                _reaction(next(self._ids), content, login))

    def thread_resolved(self, full_name: str, comment_id: int) -> tuple[bool, str | None]:
        with self._lock:
            resolved = self._state(full_name).get("resolved", {})
            return comment_id in resolved, resolved.get(comment_id)

    def add_pull_file(self, full_name: str, number: int, filename: str, patch: str | None,
                      status: str = "modified", additions: int | None = None, deletions: int | None = None) -> dict:
        """One entry of GET /pulls/{n}/files (the diff-entry shape); patch None as for a binary file."""
        entry = self._diff_entry(full_name, filename, patch, status, additions, deletions)
        self._state(full_name)["files"].setdefault(number, []).append(entry)
        return entry

    def _diff_entry(self, full_name: str, filename: str, patch: str | None, status: str = "modified",
                    additions: int | None = None, deletions: int | None = None) -> dict:
        """A file of a diff as GitHub lists it (the diff-entry shape); no `patch` when None."""
        lines = (patch or "").split("\n")
        adds = sum(1 for x in lines if x.startswith("+")) if additions is None else additions
        dels = sum(1 for x in lines if x.startswith("-")) if deletions is None else deletions
        sha = f"{zlib.crc32(filename.encode()):08x}" * 5
        entry = {"sha": sha, "filename": filename, "status": status, "additions": adds, "deletions": dels,
                 "changes": adds + dels, "blob_url": f"https://github.com/{full_name}/blob/{sha}/{filename}",
                 "raw_url": f"https://github.com/{full_name}/raw/{sha}/{filename}",
                 "contents_url": f"{self._api(full_name)}/contents/{filename}?ref={sha}"}
        entry = shaped("diff-entry", entry)
        if patch is not None:
            entry["patch"] = patch
        return entry

    def add_review(self, full_name: str, number: int, body: str | None, user: str = "octocat",
                   state: str = "COMMENTED", association: str = "MEMBER") -> dict:
        rid = next(self._ids)
        review = {"id": rid, "node_id": f"PRR_{rid}", "user": _user(user), "body": body or "", "state": state,
                  "html_url": f"https://github.com/{full_name}/pull/{number}#pullrequestreview-{rid}",
                  "pull_request_url": f"{self._api(full_name)}/pulls/{number}",
                  "author_association": association, "submitted_at": _now(), "commit_id": "0" * 40}
        review = shaped("pull-request-review", review)
        self._state(full_name)["reviews"].setdefault(number, []).append(review)
        return review

    def add_check_run(self, full_name: str, head_sha: str, name: str, conclusion: str | None = "failure",
                      log: str | None = None, title: str | None = None, summary: str | None = None,
                      annotations: list[dict] | tuple = (), app: str = "github-actions",
                      status: str = "completed") -> dict:
        """A check run of `head_sha`, shaped like a recorded check_run payload. An Actions one
        (app "github-actions") is also a job of a workflow run: same id, its log at
        /actions/jobs/{id}/logs."""
        run = copy.deepcopy(_check_run_template())
        cid, run_id = next(self._ids), next(self._ids)
        notes = [{"path": a.get("path", "README.md"), "start_line": a.get("start_line", 1),
                  "end_line": a.get("end_line", a.get("start_line", 1)), "start_column": None, "end_column": None,
                  "annotation_level": a.get("annotation_level", "failure"), "title": a.get("title", ""),
                  "message": a["message"], "raw_details": a.get("raw_details", ""),
                  "blob_href": f"https://github.com/{full_name}/blob/{head_sha}/{a.get('path', 'README.md')}"}
                 for a in annotations]
        run.update(id=cid, node_id=f"CR_{cid}", head_sha=head_sha, name=name, status=status, conclusion=conclusion,
                   url=f"{self._api(full_name)}/check-runs/{cid}",
                   html_url=f"https://github.com/{full_name}/actions/runs/{run_id}/job/{cid}",
                   details_url=f"https://github.com/{full_name}/actions/runs/{run_id}/job/{cid}",
                   _annotations=notes)
        run["output"].update(title=title, summary=summary, annotations_count=len(notes))
        run["check_suite"] = {"id": run["check_suite"]["id"]}  # the REST answer names the suite only
        run = shaped("check-run", run)
        run["app"].update(slug=app, name="GitHub Actions" if app == "github-actions" else app)
        state = self._state(full_name)
        state["check_runs"].append(run)
        if app == "github-actions":
            state["jobs"][cid] = {"id": cid, "run_id": run_id, "head_sha": head_sha, "name": name,
                                  "status": status, "conclusion": conclusion, "html_url": run["html_url"],
                                  "url": f"{self._api(full_name)}/actions/jobs/{cid}",
                                  "check_run_url": f"{self._api(full_name)}/check-runs/{cid}",
                                  "started_at": _now(), "completed_at": _now(), "steps": [], "labels": [],
                                  "_log": log, "node_id": f"J_{cid}", "run_url": f"{self._api(full_name)}/actions/runs/{run_id}",
                                  "workflow_name": "CI", "created_at": _now()}
            state["jobs"][cid] = shaped("job", state["jobs"][cid])
        return run

    def add_attachment(self, data: bytes, content_type: str = "image/png", name: str | None = None) -> str:
        """An upload to a thread: its github.com URL, which answers (with a token) by a redirect
        to a signed blob URL, as GitHub does for a private repository."""
        key = str(uuid.uuid4())
        path = f"/user-attachments/files/{next(self._ids)}/{name}" if name else f"/user-attachments/assets/{key}"
        self._blobs[f"attachments/{key}"] = (data, content_type)
        self._attachments[path] = f"attachments/{key}"
        return f"{self.url}{path}"

    def add_label(self, full_name: str, name: str, color: str = "ededed", description: str | None = None) -> dict:
        lid = next(self._ids)
        label = shaped("label", {"id": lid, "node_id": f"LA_{lid}", "name": name, "color": color,
                                 "description": description, "default": False,
                                 "url": f"{self._api(full_name)}/labels/{name}"})
        self._state(full_name).setdefault("labels", []).append(label)
        return label

    def label_names(self, full_name: str) -> list[str]:
        with self._lock:
            return [label["name"] for label in self._state(full_name).get("labels", [])]

    def labels_on(self, full_name: str, number: int) -> list[str]:
        with self._lock:
            return [label["name"] for label in self._state(full_name)["issues"][number].get("labels", [])]

    def set_commit_files(self, full_name: str, sha: str, paths: list[str],
                         patches: dict[str, str | None] | None = None) -> None:
        """The files commit `sha` changed, and the patch of each `patches` names (GitHub's `patch`: the
        unified diff from the first `@@`; None or absent as for a binary or too large file): a commit
        comment on another path, or at a position outside the patch, is refused (422)."""
        with self._lock:
            self._state(full_name).setdefault("commit_files", {})[sha] = list(paths)
            self._state(full_name).setdefault("commit_patches", {})[sha] = dict(patches or {})

    def add_commit(self, full_name: str, sha: str, files: list[str], message: str = "Change") -> None:
        """A commit on the default branch that changed `files` (GET .../commits lists it, newest first)."""
        with self._lock:
            self._state(full_name).setdefault("commits", []).insert(0, {"sha": sha, "files": list(files),
                                                                        "message": message})

    def commit_comments(self, full_name: str, sha: str | None = None) -> list[dict]:
        """The comments on commit `sha` (every commit's, when None), in the order they were made."""
        with self._lock:
            found = self._state(full_name).get("commit_comments", [])
            return [dict(c) for c in found if sha is None or c["commit_id"] == sha]

    def add_content(self, full_name: str, path: str, data: bytes) -> None:
        self._state(full_name)["contents"][path] = data

    def add_symlink(self, full_name: str, path: str, target: str) -> None:
        """A symlink on the default branch: GitHub answers a GET of it with the target file's content."""
        self._state(full_name).setdefault("symlinks", {})[path] = target

    def file_on(self, full_name: str, branch: str, path: str) -> str | None:
        """A file's text on a branch as it is now (the bot's PUTs applied), None when absent."""
        with self._lock:
            data = self._state(full_name)["branches"].get(branch, {}).get("contents", {}).get(path)
            return None if data is None else data.decode()

    def branches(self, full_name: str) -> dict[str, str]:
        """Every branch and its head commit's sha."""
        with self._lock:
            return {name: branch["sha"] for name, branch in self._state(full_name)["branches"].items()}

    def add_branch(self, full_name: str, name: str) -> None:
        """A branch at the default branch's head, with its files."""
        with self._lock:
            state = self._state(full_name)
            default = state["branches"][state["repo"]["default_branch"]]
            state["branches"][name] = {"sha": default["sha"], "contents": dict(default["contents"])}

    def merge_pull(self, full_name: str, number: int) -> None:
        """A person merges pull request `number`: its head branch's files become the default branch's."""
        with self._lock:
            state = self._state(full_name)
            pull = state["pulls"][number]
            default = state["branches"][state["repo"]["default_branch"]]
            default["contents"].clear()
            default["contents"].update(state["branches"][pull["head"]["ref"]]["contents"])
            default["sha"] = _commit_sha(full_name, default["sha"], "merge", str(number))
            pull.update(state="closed", merged=True, merged_at=_now(), closed_at=_now())

    def close_pull(self, full_name: str, number: int) -> None:
        """A person closes pull request `number` without merging it (its branch stays)."""
        with self._lock:
            self._state(full_name)["pulls"][number].update(state="closed", merged=False, closed_at=_now())

    def links_instead(self, path_pattern: str, link: Callable[[str, int], str]) -> None:
        """A hostile GitHub: each page of a list whose path matches answers `link(url, page)` as
        its Link header in place of GitHub's (`url`: the list's own URL without its query)."""
        self._links_instead.append((re.compile(path_pattern), link))

    def _link_for(self, raw_path: str, extra: dict) -> dict:
        parts = urlsplit(raw_path)
        for pattern, link in self._links_instead:
            if pattern.search(parts.path):
                page = int(dict(parse_qsl(parts.query)).get("page", 1))
                return {**extra, "link": link(f"{self.url}{parts.path}", page)}
        return extra

    def fail_next(self, method: str, path_pattern: str, status: int, headers: dict | None = None,
                  body: dict | None = None, times: int = 1, after: bool = False) -> None:
        """The next `times` matching calls answer `status` (rate limits, outages) instead.
        `status=0` drops the connection without an answer (a network error); `after=True` carries
        the call out first and then fails it, so the client cannot know it took effect."""
        self._failures.append({"method": method, "pattern": re.compile(path_pattern), "status": status,
                               "headers": headers or {}, "body": body or {"message": "injected failure"},
                               "times": times, "after": after})

    def flaky_writes(self, error_share: float = 0.1, rate_limit_share: float = 0.02, seed: int = 0,
                     slow_share: float = 0.0, slow_s: float = 6.0) -> None:
        """From now on a share of the writes (POST, PATCH; not token minting) answers 502, half of
        them after carrying the write out (a gateway timeout: the client cannot know it took effect),
        and another share answers 403 with a secondary rate limit and `retry-after: 1`; `slow_share`
        of the comment POSTs are carried out only `slow_s` seconds after they arrived (a slow
        GitHub, so a client killed meanwhile leaves a post in flight). Off by default."""
        import random
        self._flaky = {"error": error_share, "limit": rate_limit_share, "rng": random.Random(seed),
                       "slow": slow_share, "slow_s": slow_s}

    def kill_on(self, method: str, path_pattern: str, kill, nth: int = 1, after: bool = True,
                land_after: float | None = None) -> None:
        """Call `kill()` (a kill -9 of the service under test) at the `nth` matching call: with
        `after`, once the call took effect and before its answer is sent (the client never learns
        it worked); otherwise before it is carried out. The killed call gets no answer. With
        `land_after`, the call is still carried out that many seconds after the kill, as GitHub
        finishes a request whose client died while it was in flight."""
        self._kills.append({"method": method, "pattern": re.compile(path_pattern), "left": nth,
                            "kill": kill, "after": after, "land_after": land_after})

    def _kill_point(self, method: str, path: str) -> dict | None:
        for point in self._kills:
            if point["method"] == method and point["pattern"].search(path) and point["left"] > 0:
                point["left"] -= 1
                if point["left"] == 0:
                    return point
        return None

    def injected_counts(self) -> tuple[int, int]:
        """(502s, secondary rate limits) answered by flaky_writes so far."""
        with self._lock:
            return self.injected["502"], self.injected["rate_limit"]

    def _flaky_failure(self, method: str, path: str) -> dict | None:
        if self._flaky is None or method not in ("POST", "PATCH") or path.endswith("/access_tokens"):
            return None
        draw = self._flaky["rng"].random()
        if draw < self._flaky["error"]:
            self.injected["502"] += 1
            return {"status": 502, "body": {"message": "Server Error"}, "headers": {},
                    "after": self._flaky["rng"].random() < 0.5}
        if draw < self._flaky["error"] + self._flaky["limit"]:
            self.injected["rate_limit"] += 1
            return {"status": 403, "headers": {"retry-after": "1"}, "after": False,
                    "body": {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}}
        return None

    def expire_tokens(self) -> None:
        """Every installation token issued so far stops working (401), as after its hour is up."""
        with self._lock:
            self.tokens.clear()

    # ---- reading
    def calls_to(self, method: str, path_pattern: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method and re.search(path_pattern, c.path)]

    def comments(self, full_name: str, number: int) -> list[dict]:
        with self._lock:
            state = self._state(full_name)
            issue = [c for c in state["comments"].values() if c["issue_url"].endswith(f"/issues/{number}")]
            review = [c for c in state["review_comments"].values() if c["_number"] == number]
            return sorted(issue + review, key=lambda c: c["id"])

    def pulls(self, full_name: str) -> list[dict]:
        with self._lock:
            return list(self._state(full_name)["pulls"].values())

    def wait_for(self, predicate, timeout: float = 20.0, interval: float = 0.05):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(interval)
        raise AssertionError(f"condition not met within {timeout} s; calls: "
                             f"{[(c.method, c.path) for c in self.calls]}")

    # ---- internals
    def _state(self, full_name: str) -> dict:
        return self._repos[full_name]

    def _api(self, full_name: str) -> str:
        port = self._server.server_address[1] if self._server else 0
        return f"http://127.0.0.1:{port}/repos/{full_name}"

    def _injected_failure(self, method: str, path: str) -> dict | None:
        for failure in self._failures:
            if failure["method"] == method and failure["pattern"].search(path) and failure["times"] > 0:
                failure["times"] -= 1
                return failure
        return None

    @staticmethod
    def _unversioned(headers: dict) -> str | None:
        """Why one of the bot's REST calls (its User-Agent) is refused for not naming the API version
        and media type, or None. GitHub itself falls back to a default version; this fake refuses,
        so the bot cannot drift. A test's own direct calls to the fake are not the bot's."""
        if not headers.get("user-agent", "").startswith("github-agent-bot"):
            return None
        if headers.get("x-github-api-version") != "2022-11-28":
            return "a REST call must send X-GitHub-Api-Version: 2022-11-28"
        if not headers.get("accept", "").startswith("application/vnd.github"):
            return "a REST call must accept application/vnd.github+json (or another GitHub media type)"
        return None

    def _authorized(self, headers: dict, path: str) -> bool:
        if not self.require_auth or path in ("/rate_limit", "/app") or path.endswith("/access_tokens") \
                or path.startswith("/_blobs/"):
            return True
        scheme, _, value = headers.get("authorization", "").partition(" ")
        return scheme.lower() in ("token", "bearer") and value in self.tokens

    def _dispatch(self, method: str, path: str, body, headers: dict) -> tuple[int, object, dict]:
        # GraphQL (POST /graphql) is not REST: it takes application/json and no REST version
        if not path.startswith(("/_blobs/", "/graphql")) and (unversioned := self._unversioned(headers)):
            with self._lock:
                self.calls.append(Call(method, path, body, headers))
            return 400, {"message": f"fake GitHub: {unversioned}"}, {}
        if self._flaky and self._flaky["slow"] and method == "POST" and path.endswith("/comments"):
            with self._lock:
                slow = self._flaky["rng"].random() < self._flaky["slow"]
                self.injected["slow"] = self.injected.get("slow", 0) + slow
            if slow:
                time.sleep(self._flaky["slow_s"])
        with self._lock:
            self.calls.append(Call(method, path, body, headers))
            killing = self._kill_point(method, path)
            if killing and killing["land_after"] is not None:
                killing["kill"]()
                threading.Timer(killing["land_after"], self._route, (method, path, body, headers)).start()
                return 0, None, {}
            if killing and not killing["after"]:
                killing["kill"]()
                return 0, None, {}
            if killing:
                self._route(method, path, body, headers)
                killing["kill"]()
                return 0, None, {}
            failure = self._injected_failure(method, path) or self._flaky_failure(method, path)
            if failure and not failure["after"]:
                return failure["status"], failure["body"], failure["headers"]
            answer = self._route(method, path, body, headers)
            if failure:
                return failure["status"], failure["body"], failure["headers"]
            return answer

    def _route(self, method: str, path: str, body, headers: dict) -> tuple[int, object, dict]:
        with self._lock:
            if not self._authorized(headers, path):
                return 401, {"message": "Bad credentials"}, {}
            for route_method, pattern, handler in self._routes:
                match = pattern.fullmatch(path)
                if match and route_method == method:
                    try:
                        return handler(body, headers, **match.groupdict())
                    except KeyError:
                        return 404, {"message": "Not Found"}, {}
            return 404, {"message": f"fake GitHub has no route {method} {path}"}, {}

    def _check_conformance(self, method: str, raw_path: str, body, status: int, payload) -> None:
        if self._checker is not None:
            problems = self._checker.check(method, raw_path, body, status, payload)
            with self._lock:
                self.conformance_errors.extend(problems)

    # ---- handlers
    def _access_token(self, body, headers, installation):
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return 401, {"message": "A JSON web token could not be decoded"}, {}
        try:
            claims = (jwt.decode(token, self.public_key, algorithms=["RS256"]) if self.public_key
                      else jwt.decode(token, options={"verify_signature": False}))
        except jwt.PyJWTError as exc:
            return 401, {"message": f"invalid JWT: {exc}"}, {}
        if self.app_id is not None and str(claims.get("iss")) != str(self.app_id):
            return 401, {"message": "'Issuer' claim ('iss') must be an Integer"}, {}
        token = f"ghs_fake{next(self._ids)}x{int(installation):d}"
        self.tokens[token] = int(installation)
        expires = datetime.now(UTC) + timedelta(seconds=self.token_ttl_s)
        return 201, shaped("installation-token", {"token": token, "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                     "permissions": {"issues": "write", "pull_requests": "write", "contents": "write"},
                     "repository_selection": "all"}), {}

    def _app(self, body, headers):
        """GET /app with the App's JWT: who the App is (the settings' App check asks it)."""
        status, answer, extra = self._access_token(body, headers, "0")
        if status != 201:
            return status, answer, extra
        self.tokens.pop(answer["token"], None)
        return 200, shaped("integration", {"id": int(self.app_id or 1), "slug": "bot", "name": "bot",
                                           "html_url": "https://github.com/apps/bot"}), {}

    def _repo(self, body, headers, owner, repo):
        return 200, self._state(f"{owner}/{repo}")["repo"], {}

    def _installation(self, body, headers, owner, repo):
        self._state(f"{owner}/{repo}")
        return 200, shaped("installation", {"id": 1, "account": _user(owner, "Organization"),
                                            "app_id": int(self.app_id or 1)}), {}

    def _permission(self, body, headers, owner, repo, user):
        return 200, shaped("repository-collaborator-permission", self._state(f"{owner}/{repo}")["perms"][user]), {}

    def _issue(self, body, headers, owner, repo, number):
        state = self._state(f"{owner}/{repo}")
        if int(number) in state.get("deleted_issues", ()):
            return 410, {"message": "This issue was deleted",
                         "documentation_url": "https://docs.github.com/rest/issues/issues#get-an-issue"}, {}
        return 200, state["issues"][int(number)], {}

    def _create_issue(self, body, headers, owner, repo):
        full = f"{owner}/{repo}"
        state = self._state(full)
        number = max([*state["issues"], *state.get("deleted_issues", ()), 0]) + 1
        issue = self.add_issue(full, number, title=body["title"], body=body.get("body") or "", user="bot[bot]")
        issue["user"]["type"] = "Bot"
        return 201, issue, {}

    def _list_issues(self, body, headers, owner, repo):
        """The repository's open issues (pull requests among them, as GitHub lists them), newest first."""
        state = self._state(f"{owner}/{repo}")
        return 200, [issue for _, issue in sorted(state["issues"].items(), reverse=True)
                     if issue.get("state") == "open"], {}

    def _list_comments(self, body, headers, owner, repo, number):
        state = self._state(f"{owner}/{repo}")
        return 200, [c for c in state["comments"].values() if c["issue_url"].endswith(f"/issues/{number}")], {}

    def _create_comment(self, body, headers, owner, repo, number):
        full = f"{owner}/{repo}"
        self._state(full)["issues"][int(number)]  # 404 for an unknown issue
        comment = self.add_comment(full, int(number), body["body"], user="bot[bot]", user_type="Bot",
                                   association="NONE")
        return 201, comment, {}

    def _create_commit_comment(self, body, headers, owner, repo, sha):
        """A comment on a commit, as GitHub checks it: `path` (with `line` or `position`) must be a file
        the commit changed, when the fake knows the commit's files (`set_commit_files`)."""
        full = f"{owner}/{repo}"
        state = self._state(full)
        known = state.get("commit_files", {}).get(sha)
        if body.get("path") is not None and known is not None and body["path"] not in known:
            return 422, _unprocessable("Validation Failed"), {}
        line = body.get("line")
        if body.get("path") is not None and body.get("position") is not None:
            patch = state.get("commit_patches", {}).get(sha, {}).get(body["path"])
            shown = _position_lines(patch) if patch else {}
            if patch is not None and body["position"] not in shown:
                return 422, _unprocessable("Validation Failed"), {}
            line = shown.get(body["position"], line)
        cid = next(self._ids)
        comment = shaped("commit-comment", {
            "id": cid, "node_id": f"CC_{cid}", "body": body["body"], "path": body.get("path"),
            "line": line, "position": body.get("position"), "commit_id": sha,
            "user": {**_user("bot[bot]", "Bot")}, "author_association": "NONE", "created_at": _now(),
            "updated_at": _now(), "url": f"{self._api(full)}/comments/{cid}",
            "html_url": f"https://github.com/{full}/commit/{sha}#commitcomment-{cid}"})
        state.setdefault("commit_comments", []).append(comment)
        return 201, comment, {}

    def _list_commits(self, body, headers, owner, repo, query=None):
        """The default branch's commits (`add_commit`), newest first; `path` keeps those that changed it."""
        full = f"{owner}/{repo}"
        path = dict(parse_qsl(query or "")).get("path")
        person = {"name": "Codertocat", "email": "c@example.com", "date": _now()}
        return 200, [shaped("commit", {
            "sha": c["sha"], "node_id": f"C_{c['sha'][:8]}", "url": f"{self._api(full)}/commits/{c['sha']}",
            "html_url": f"https://github.com/{full}/commit/{c['sha']}", "parents": [],
            "comments_url": f"{self._api(full)}/commits/{c['sha']}/comments", "author": None, "committer": None,
            "commit": {"message": c["message"], "author": person, "committer": person, "comment_count": 0,
                       "url": f"{self._api(full)}/git/commits/{c['sha']}",
                       "tree": {"sha": "b" * 40, "url": f"{self._api(full)}/git/trees/{'b' * 40}"}}})
            for c in self._state(full).get("commits", []) if path is None or path in c["files"]], {}

    def _get_commit(self, body, headers, owner, repo, sha, query=None):
        """One commit with a page of its files (GitHub's default 300 a page, `per_page` at most 300)."""
        full = f"{owner}/{repo}"
        state = self._state(full)
        paths = state.get("commit_files", {}).get(sha)
        if paths is None:
            paths = next((c["files"] for c in state.get("commits", []) if c["sha"] == sha), None)
        if paths is None:
            return 422, _unprocessable(f"No commit found for SHA: {sha}"), {}
        asked = dict(parse_qsl(query or ""))
        per_page, page = min(int(asked.get("per_page", 300)), 300), int(asked.get("page", 1))
        patches = state.get("commit_patches", {}).get(sha, {})
        files = [self._diff_entry(full, path, patches.get(path)) for path in paths]
        shown = files[(page - 1) * per_page: page * per_page]
        person = {"name": "Codertocat", "email": "c@example.com", "date": _now()}
        adds, dels = sum(f["additions"] for f in files), sum(f["deletions"] for f in files)
        return 200, shaped("commit", {
            "sha": sha, "node_id": f"C_{sha[:8]}", "url": f"{self._api(full)}/commits/{sha}",
            "html_url": f"https://github.com/{full}/commit/{sha}", "parents": [],
            "comments_url": f"{self._api(full)}/commits/{sha}/comments", "author": None, "committer": None,
            "commit": {"message": "Change", "author": person, "committer": person, "comment_count": 0,
                       "url": f"{self._api(full)}/git/commits/{sha}",
                       "tree": {"sha": "b" * 40, "url": f"{self._api(full)}/git/trees/{'b' * 40}"}},
            "stats": {"additions": adds, "deletions": dels, "total": adds + dels}, "files": shown}), {}

    def _list_commit_comments(self, body, headers, owner, repo, sha):
        return 200, [c for c in self._state(f"{owner}/{repo}").get("commit_comments", []) if c["commit_id"] == sha], {}

    def _labels(self, body, headers, owner, repo):
        return 200, list(self._state(f"{owner}/{repo}").get("labels", [])), {}

    def _add_labels(self, body, headers, owner, repo, number):
        full = f"{owner}/{repo}"
        issue = self._state(full)["issues"][int(number)]
        on = issue.setdefault("labels", [])
        for name in body["labels"]:
            known = {label["name"].casefold(): label for label in self._state(full).get("labels", [])}
            label = known.get(name.casefold()) or self.add_label(full, name)  # GitHub creates an unknown one
            if label["name"] not in [have["name"] for have in on]:
                on.append(label)
        return 200, list(on), {}

    def _comment(self, body, headers, owner, repo, kind, cid):
        return 200, self._state(f"{owner}/{repo}")[kind][int(cid)], {}

    def _update_comment(self, body, headers, owner, repo, kind, cid):
        comment = self._state(f"{owner}/{repo}")[kind][int(cid)]
        comment.update(body=body["body"], updated_at=_now())
        return 200, comment, {}

    def _delete_comment(self, body, headers, owner, repo, kind, cid):
        del self._state(f"{owner}/{repo}")[kind][int(cid)]  # KeyError: 404, as GitHub answers a gone comment
        return 204, b"", {}

    def _react(self, body, headers, owner, repo, kind, cid):
        self._state(f"{owner}/{repo}")[kind][int(cid)]
        subject = "issue_comment" if kind == "comments" else "review_comment"
        reaction = {"subject": subject, "comment_id": int(cid), "content": body["content"]}
        if reaction in self.reactions:
            return 200, _reaction(1, body["content"]), {}
        self.reactions.append(reaction)
        return 201, _reaction(len(self.reactions), body["content"]), {}

    def _react_issue(self, body, headers, owner, repo, number):
        self._state(f"{owner}/{repo}")["issues"][int(number)]
        reaction = {"subject": "issue", "comment_id": int(number), "content": body["content"]}
        fresh = reaction not in self.reactions
        if fresh:
            self.reactions.append(reaction)
        return (201 if fresh else 200), _reaction(len(self.reactions), body["content"]), {}

    def _list_review_comment_reactions(self, body, headers, owner, repo, cid, query=None):
        """A review comment's reactions, the bot's and people's, filtered by `content` and paged as GitHub does."""
        state = self._state(f"{owner}/{repo}")
        state["review_comments"][int(cid)]  # KeyError: 404
        params = dict(parse_qsl(query or ""))
        mine = [_reaction(i + 1, r["content"]) for i, r in enumerate(self.reactions)
                if r["subject"] == "review_comment" and r["comment_id"] == int(cid)]
        found = [r for r in mine + state.get("people_reactions", {}).get(int(cid), [])
                 if params.get("content") in (None, r["content"])]
        size, page = min(int(params.get("per_page", 30)), 100), max(int(params.get("page", 1)), 1)
        return 200, found[(page - 1) * size:page * size], {}

    def _list_review_comments(self, body, headers, owner, repo, number):
        state = self._state(f"{owner}/{repo}")
        return 200, [c for c in state["review_comments"].values() if c["_number"] == int(number)], {}

    def _reply(self, body, headers, owner, repo, number, cid):
        full = f"{owner}/{repo}"
        parent = self._state(full)["review_comments"][int(cid)]
        if parent.get("in_reply_to_id"):
            return 422, _unprocessable("Replies to replies are not supported."), {}
        reply = self.add_review_comment(full, int(number), body["body"], user="bot[bot]", user_type="Bot",
                                        path=parent["path"], line=parent["line"], in_reply_to=parent["id"],
                                        association="NONE")
        return 201, reply, {}

    def _pull(self, body, headers, owner, repo, number):
        return 200, self._state(f"{owner}/{repo}")["pulls"][int(number)], {}

    def _list_pulls(self, body, headers, owner, repo, query=""):
        params = dict(p.split("=", 1) for p in (query or "").split("&") if "=" in p)
        found = [projected("pull-request-simple", p) for p in self._state(f"{owner}/{repo}")["pulls"].values()
                 if params.get("state", "open") in ("all", p["state"])
                 and ("head" not in params or p["head"]["label"] == params["head"])
                 and ("base" not in params or p["base"]["ref"] == params["base"])]
        return 200, found, {}

    def _create_pull(self, body, headers, owner, repo):
        full = f"{owner}/{repo}"
        state = self._state(full)
        head = body["head"] if ":" in body["head"] else f"{owner}:{body['head']}"
        if any(p["head"]["label"] == head and p["state"] == "open" for p in state["pulls"].values()):
            return 422, {**_unprocessable("Validation Failed"), "errors": [
                {"resource": "PullRequest", "code": "custom",
                 "message": f"A pull request already exists for {head}."}]}, {}
        number = max([*state["issues"], 0]) + 1
        pull = self.add_pull(full, number, head_ref=head.split(":", 1)[1], base_ref=body.get("base"),
                             head_repo=f"{head.split(':')[0]}/{repo}", title=body.get("title", ""),
                             body=body.get("body") or "", user="bot[bot]")
        pull["draft"] = bool(body.get("draft", False))
        return 201, pull, {}

    def _update_pull(self, body, headers, owner, repo, number):
        pull = self._state(f"{owner}/{repo}")["pulls"][int(number)]
        pull.update({key: body[key] for key in ("title", "body", "state") if key in body})
        return 200, pull, {}

    def _pull_files(self, body, headers, owner, repo, number):
        return 200, self._state(f"{owner}/{repo}")["files"].get(int(number), []), {}

    def _reviews(self, body, headers, owner, repo, number):
        return 200, self._state(f"{owner}/{repo}")["reviews"].get(int(number), []), {}

    def _create_review(self, body, headers, owner, repo, number):
        """POST a review as GitHub checks it: a known event, and every inline comment on a line the
        pull request's diff shows on its side (RIGHT: added or context lines, new numbering; LEFT:
        deleted or context lines, old numbering), a multi-line one within one hunk; else 422."""
        full = f"{owner}/{repo}"
        state = self._state(full)
        state["pulls"][int(number)]
        if body.get("event", "COMMENT") not in ("COMMENT", "APPROVE", "REQUEST_CHANGES", None):
            return 422, {**_unprocessable("Unprocessable Entity"), "errors": ["Invalid event"]}, {}
        patches = {f["filename"]: f.get("patch") for f in state["files"].get(int(number), [])}
        for comment in body.get("comments") or []:
            problem = _review_comment_problem(comment, patches)
            if problem:
                return 422, {**_unprocessable("Unprocessable Entity"), "errors": [problem], "status": "422"}, {}
        review = self.add_review(full, int(number), body.get("body"), user="bot[bot]",
                                 state={"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}.get(
                                     body.get("event"), "COMMENTED"), association="NONE")
        review["commit_id"] = body.get("commit_id") or review["commit_id"]
        review["user"]["type"] = "Bot"
        review["_comments"] = []
        for comment in body.get("comments") or []:
            stored = self.add_review_comment(full, int(number), comment["body"], user="bot[bot]", user_type="Bot",
                                             path=comment["path"], line=comment["line"], review_id=review["id"],
                                             association="NONE")
            stored.update(side=comment.get("side", "RIGHT"), start_line=comment.get("start_line"),
                          start_side=comment.get("start_side"))
            review["_comments"].append(stored)
        return 200, {k: v for k, v in review.items() if k != "_comments"}, {}

    def submitted_reviews(self, full_name: str, number: int) -> list[dict]:
        """Reviews posted through the API (not seeded), each with its inline comments in `_comments`."""
        with self._lock:
            return [r for r in self._state(full_name)["reviews"].get(number, []) if "_comments" in r]

    def _check_runs(self, body, headers, owner, repo, ref):
        runs = [{k: v for k, v in r.items() if not k.startswith("_")}
                for r in self._state(f"{owner}/{repo}")["check_runs"] if r["head_sha"] == ref]
        return 200, {"total_count": len(runs), "check_runs": runs}, {}

    def _annotations(self, body, headers, owner, repo, cid):
        runs = [r for r in self._state(f"{owner}/{repo}")["check_runs"] if r["id"] == int(cid)]
        return (200, runs[0]["_annotations"], {}) if runs else (404, {"message": "Not Found"}, {})

    def _run_jobs(self, body, headers, owner, repo, run):
        jobs = [{k: v for k, v in j.items() if not k.startswith("_")}
                for j in self._state(f"{owner}/{repo}")["jobs"].values() if j["run_id"] == int(run)]
        return 200, {"total_count": len(jobs), "jobs": jobs}, {}

    def _job_logs(self, body, headers, owner, repo, job):
        log = self._state(f"{owner}/{repo}")["jobs"][int(job)]["_log"]
        if log is None:
            return 410, {"message": "Logs are no longer available"}, {}
        key = f"logs/{job}-{uuid.uuid4().hex[:8]}"
        self._blobs[key] = (log.encode(), "text/plain")
        return 302, b"", {"location": f"{self.url}/_blobs/{key}?sig=signed", "content-type": "text/plain"}

    def _attachment(self, body, headers, rest):
        key = self._attachments[f"/user-attachments/{rest}"]
        return 302, b"", {"location": f"{self.url}/_blobs/{key}?jwt=signed", "content-type": "text/plain"}

    def _blob(self, body, headers, key):
        data, kind = self._blobs[key]
        return 200, data, {"content-type": kind}

    def _content(self, body, headers, owner, repo, path, query=None):
        state = self._state(f"{owner}/{repo}")
        ref = dict(parse_qsl(query or "")).get("ref", "")
        files = state["branches"].get(ref, {}).get("contents", state["contents"])  # a commit sha: the default's
        path = state.get("symlinks", {}).get(path, path)  # a symlink to a file: the file, under its own path
        if path not in files and any(name.startswith(path + "/") for name in files):
            return 200, [_content_file(self._api(f"{owner}/{repo}"), name, files[name])
                         for name in sorted(files) if name.rpartition("/")[0] == path], {}
        data = files[path]
        if "raw" in headers.get("accept", ""):
            return 200, data, {"content-type": "application/octet-stream"}
        return 200, _content_file(self._api(f"{owner}/{repo}"), path, data), {}

    def _put_content(self, body, headers, owner, repo, path):
        """Create or update a file on a branch, as GitHub checks it: the branch exists, the `sha` of
        the file replaced is given and current (409 when stale, 422 when missing)."""
        full = f"{owner}/{repo}"
        state = self._state(full)
        branch = state["branches"].get(body.get("branch") or state["repo"]["default_branch"])
        if branch is None:
            return 404, {"message": f"Branch {body.get('branch')} not found"}, {}
        files, data = branch["contents"], base64.b64decode(body["content"])
        if path in files and body.get("sha") != _blob_sha(files[path]):
            if body.get("sha") is None:
                return 422, _unprocessable("Invalid request.\n\n\"sha\" wasn't supplied."), {}
            return 409, {"message": f"{path} does not match {body['sha']}"}, {}
        created = path not in files
        files[path] = data
        branch["sha"] = _commit_sha(full, branch["sha"] + path + str(len(data)))
        content = {k: v for k, v in _content_file(self._api(full), path, data).items()
                   if k not in ("content", "encoding")}
        content["download_url"] = f"https://raw.githubusercontent.com/{full}/{body.get('branch') or 'HEAD'}/{path}"
        commit = {"sha": branch["sha"], "node_id": f"C_{branch['sha'][:8]}", "message": body["message"],
                  "url": f"{self._api(full)}/git/commits/{branch['sha']}",
                  "html_url": f"https://github.com/{full}/commit/{branch['sha']}"}
        return (201 if created else 200), shaped("file-commit", {"content": content, "commit": commit}), {}

    def _delete_content(self, body, headers, owner, repo, path):
        """Delete a file on a branch, as GitHub checks it: the file exists and `sha` is its current one."""
        full = f"{owner}/{repo}"
        state = self._state(full)
        branch = state["branches"].get(body.get("branch") or state["repo"]["default_branch"])
        if branch is None or path not in branch["contents"]:
            return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}
        if body.get("sha") != _blob_sha(branch["contents"][path]):
            return 409, {"message": f"{path} does not match {body.get('sha')}"}, {}
        del branch["contents"][path]
        branch["sha"] = _commit_sha(full, branch["sha"], "delete", path)
        commit = {"sha": branch["sha"], "node_id": f"C_{branch['sha'][:8]}", "message": body["message"],
                  "url": f"{self._api(full)}/git/commits/{branch['sha']}",
                  "html_url": f"https://github.com/{full}/commit/{branch['sha']}"}
        return 200, shaped("file-commit", {"content": None, "commit": commit}), {}

    def _git_ref(self, body, headers, owner, repo, ref):
        name = ref.removeprefix("heads/")
        branch = self._state(f"{owner}/{repo}")["branches"].get(name) if ref.startswith("heads/") else None
        if branch is None:
            return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}
        return 200, self._ref_answer(f"{owner}/{repo}", name, branch["sha"]), {}

    def _create_ref(self, body, headers, owner, repo):
        """A new branch at a commit some branch has; 422 when the ref exists, as GitHub answers."""
        full = f"{owner}/{repo}"
        branches = self._state(full)["branches"]
        name = body["ref"].removeprefix("refs/heads/")
        if not body["ref"].startswith("refs/heads/") or name in branches:
            return 422, _unprocessable("Reference already exists"), {}
        source = next((b for b in branches.values() if b["sha"] == body["sha"]), None)
        if source is None:
            return 422, _unprocessable("Object does not exist"), {}
        branches[name] = {"sha": body["sha"], "contents": dict(source["contents"])}
        return 201, self._ref_answer(full, name, body["sha"]), {
            "location": f"{self._api(full)}/git/refs/heads/{name}"}

    def _ref_answer(self, full: str, name: str, sha: str) -> dict:
        return {"ref": f"refs/heads/{name}", "node_id": f"REF_{name}", "url": f"{self._api(full)}/git/refs/heads/{name}",
                "object": {"type": "commit", "sha": sha, "url": f"{self._api(full)}/git/commits/{sha}"}}

    def _rate_limit(self, body, headers):
        reset = int(time.time()) + 3600
        core = {"limit": 5000, "remaining": 4999, "reset": reset, "used": 1}
        return 200, shaped("rate-limit-overview", {"resources": {"core": core}, "rate": core}), {}

    # ---- check runs written by the bot (Checks API: POST and PATCH /repos/{o}/{r}/check-runs)
    def check_runs_of(self, full_name: str, head_sha: str | None = None) -> list[dict]:
        """Stored check runs (with `_annotations` and `_history`: each write's status and conclusion)."""
        with self._lock:
            return [copy.deepcopy(r) for r in self._state(full_name)["check_runs"]
                    if head_sha is None or r["head_sha"] == head_sha]

    def _create_check_run(self, body, headers, owner, repo):
        if not isinstance(body, dict) or not body.get("name") or not body.get("head_sha"):
            return 422, _refusal("Invalid request.\n\n\"name\" and \"head_sha\" weren't supplied.",
                                 "create-a-check-run"), {}
        if problem := _check_run_problem(body):
            return 422, _refusal(problem, "create-a-check-run"), {}
        run = self.add_check_run(f"{owner}/{repo}", body["head_sha"], body["name"], conclusion=None,
                                 app="bot", status="queued")
        run.update(details_url=body.get("details_url"), external_id=body.get("external_id", ""), _history=[])
        _write_check_run(run, body)
        return 201, _public(run), {}

    def _update_check_run(self, body, headers, owner, repo, cid):
        runs = [r for r in self._state(f"{owner}/{repo}")["check_runs"] if r["id"] == int(cid)]
        if not runs:
            return 404, {"message": "Not Found"}, {}
        body = body if isinstance(body, dict) else {}
        if problem := _check_run_problem(body):
            return 422, _refusal(problem, "update-a-check-run"), {}
        _write_check_run(runs[0], body)
        return 200, _public(runs[0]), {}

    def _graphql(self, body, headers):
        query, variables = (body or {}).get("query") or "", (body or {}).get("variables") or {}
        if "resolveReviewThread" in query:
            return self._resolve_thread_query(str(variables.get("thread") or ""))
        if "reviewThreads" in query:
            return 200, {"data": {"repository": self._threads_of(
                f"{variables.get('owner')}/{variables.get('name')}", int(variables.get("number") or 0))}}, {}
        return 200, {"errors": [{"message": "fake GitHub: this GraphQL query is not served"}]}, {}

    def _resolve_thread_query(self, thread_id: str):
        cid = int(thread_id.removeprefix("PRRT_") or 0)
        for full, state in self._repos.items():
            if cid in state["review_comments"]:
                self.resolve_thread(full, cid, None)
                return 200, {"data": {"resolveReviewThread": {"thread": {"id": thread_id, "isResolved": True}}}}, {}
        return 200, {"data": {"resolveReviewThread": None}, "errors": [
            {"type": "NOT_FOUND", "path": ["resolveReviewThread"],
             "message": f"Could not resolve to a node with the global id of '{thread_id}'"}]}, {}

    def _threads_of(self, full: str, number: int) -> dict | None:
        """`repository { pullRequest { reviewThreads { nodes } } }`: one thread per top-level review
        comment with its replies; a bot's login without `[bot]`, as GraphQL names a Bot."""
        if full not in self._repos:
            return None
        state = self._state(full)
        comments = [c for c in state["review_comments"].values() if c["_number"] == number]
        resolved = state.get("resolved", {})
        nodes = []
        for top in (c for c in comments if not c.get("in_reply_to_id")):
            replies = [c for c in comments if c.get("in_reply_to_id") == top["id"]]
            who = resolved.get(top["id"])
            nodes.append({"id": f"PRRT_{top['id']}", "isResolved": top["id"] in resolved,
                          "resolvedBy": {"login": who} if who else None,
                          "comments": {"nodes": [_graphql_comment(c) for c in [top, *replies]]}})
        return {"pullRequest": {"reviewThreads": {"nodes": nodes}}}

    def _get_check_run(self, body, headers, owner, repo, cid):
        runs = [r for r in self._state(f"{owner}/{repo}")["check_runs"] if r["id"] == int(cid)]
        return (200, _public(runs[0]), {}) if runs else (404, {"message": "Not Found"}, {})

def _routes(gh: FakeGitHub) -> list:
    repo = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
    kind = r"(?P<kind>comments)"
    table = [
        ("POST", r"/app/installations/(?P<installation>\d+)/access_tokens", gh._access_token),
        ("GET", r"/app", gh._app),
        ("GET", r"/rate_limit", gh._rate_limit),
        ("GET", repo, gh._repo),
        ("GET", repo + r"/installation", gh._installation),
        ("GET", repo + r"/collaborators/(?P<user>[^/]+)/permission", gh._permission),
        ("GET", repo + r"/issues/(?P<number>\d+)", gh._issue),
        ("POST", repo + r"/issues", gh._create_issue),
        ("GET", repo + r"/issues", gh._list_issues),
        ("GET", repo + r"/issues/(?P<number>\d+)/comments", gh._list_comments),
        ("POST", repo + r"/issues/(?P<number>\d+)/reactions", gh._react_issue),
        ("POST", repo + r"/issues/(?P<number>\d+)/comments", gh._create_comment),
        ("POST", repo + r"/issues/(?P<number>\d+)/labels", gh._add_labels),
        ("GET", repo + r"/labels", gh._labels),
        ("GET", repo + r"/issues/" + kind + r"/(?P<cid>\d+)", gh._comment),
        ("PATCH", repo + r"/issues/" + kind + r"/(?P<cid>\d+)", gh._update_comment),
        ("DELETE", repo + r"/issues/" + kind + r"/(?P<cid>\d+)", gh._delete_comment),
        ("POST", repo + r"/issues/" + kind + r"/(?P<cid>\d+)/reactions", gh._react),
        ("GET", repo + r"/pulls/comments/(?P<cid>\d+)/reactions(?:\?(?P<query>.*))?",
         gh._list_review_comment_reactions),
        ("GET", repo + r"/pulls/(?P<kind>comments)/(?P<cid>\d+)", None),
        ("PATCH", repo + r"/pulls/(?P<kind>comments)/(?P<cid>\d+)", None),
        ("DELETE", repo + r"/pulls/(?P<kind>comments)/(?P<cid>\d+)", None),
        ("POST", repo + r"/pulls/(?P<kind>comments)/(?P<cid>\d+)/reactions", None),
        ("GET", repo + r"/pulls/(?P<number>\d+)/comments", gh._list_review_comments),
        ("POST", repo + r"/pulls/(?P<number>\d+)/comments/(?P<cid>\d+)/replies", gh._reply),
        ("GET", repo + r"/pulls/(?P<number>\d+)", gh._pull),
        ("GET", repo + r"/pulls(?:\?(?P<query>.*))?", gh._list_pulls),
        ("POST", repo + r"/pulls", gh._create_pull),
        ("PATCH", repo + r"/pulls/(?P<number>\d+)", gh._update_pull),
        ("GET", repo + r"/pulls/(?P<number>\d+)/files", gh._pull_files),
        ("GET", repo + r"/pulls/(?P<number>\d+)/reviews", gh._reviews),
        ("POST", repo + r"/pulls/(?P<number>\d+)/reviews", gh._create_review),
        ("GET", repo + r"/commits/(?P<ref>[^/]+)/check-runs", gh._check_runs),
        ("POST", repo + r"/commits/(?P<sha>[0-9a-f]{40})/comments", gh._create_commit_comment),
        ("GET", repo + r"/commits/(?P<sha>[0-9a-f]{40})/comments", gh._list_commit_comments),
        ("GET", repo + r"/commits/(?P<sha>[0-9a-f]{40})(?:\?(?P<query>.*))?", gh._get_commit),
        ("GET", repo + r"/commits(?:\?(?P<query>.*))?", gh._list_commits),
        ("GET", repo + r"/check-runs/(?P<cid>\d+)/annotations", gh._annotations),
        ("GET", repo + r"/actions/runs/(?P<run>\d+)/jobs", gh._run_jobs),
        ("GET", repo + r"/actions/jobs/(?P<job>\d+)/logs", gh._job_logs),
        ("GET", repo + r"/contents/(?P<path>[^?]+)(?:\?(?P<query>.*))?", gh._content),
        ("PUT", repo + r"/contents/(?P<path>[^?]+)", gh._put_content),
        ("DELETE", repo + r"/contents/(?P<path>[^?]+)", gh._delete_content),
        ("GET", repo + r"/git/ref/(?P<ref>.+)", gh._git_ref),
        ("POST", repo + r"/git/refs", gh._create_ref),
        ("GET", r"/user-attachments/(?P<rest>(?:assets/[\w-]+|files/\d+/[^/]+))", gh._attachment),
        ("GET", r"/_blobs/(?P<key>[\w/-]+)", gh._blob),
        ("POST", repo + r"/check-runs", gh._create_check_run),
        ("PATCH", repo + r"/check-runs/(?P<cid>\d+)", gh._update_check_run),
        ("GET", repo + r"/check-runs/(?P<cid>\d+)", gh._get_check_run),
        ("POST", r"/graphql", gh._graphql),
    ]
    review = {"GET": gh._comment, "PATCH": gh._update_comment, "POST": gh._react, "DELETE": gh._delete_comment}
    routes = []
    for method, pattern, handler in table:
        if handler is None:  # review-comment routes share the issue-comment handlers, other table
            handler = _review_kind(review[method])
        routes.append((method, re.compile(pattern), handler))
    return routes


def _review_kind(handler):
    def wrapped(body, headers, kind, **params):
        return handler(body, headers, kind="review_comments", **params)
    return wrapped


def _handler_for(gh: FakeGitHub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # keep test output clean
            pass

        def _serve(self):
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            kept = "?" not in self.path or any(part in self.path for part in ("/pulls?", "/contents/", "/commits?")) \
                or re.search(r"/commits/[0-9a-f]{40}\?", self.path) is not None
            path = self.path if kept else self.path.split("?")[0]
            status, payload, extra = gh._dispatch(self.command, path, body, headers)
            if status == 0:  # an injected network error: no answer at all
                self.close_connection = True
                return
            if self.command == "GET" and status == 200 and isinstance(payload, list):
                payload, extra = _paginate(gh.url, self.path, payload, extra)
                extra = gh._link_for(self.path, extra)
            # checked before answering, so a test that got its answer sees the check's findings;
            # GraphQL is not in the REST description (its answers keep GraphQL's documented shapes)
            if path != "/graphql":
                gh._check_conformance(self.command, self.path, body, status, payload)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            for name, value in {"content-type": "application/json; charset=utf-8",
                                "x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999",
                                "x-ratelimit-reset": str(int(time.time()) + 3600), **extra}.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

    return Handler


def _paginate(base: str, raw_path: str, items: list, extra: dict) -> tuple[list, dict]:
    """One page of a list, and GitHub's Link header: `prev`, `next`, `last`, `first` as GitHub
    names them (the first page names no prev or first, the last no next or last)."""
    parts = urlsplit(raw_path)
    query = dict(parse_qsl(parts.query))
    per_page = max(1, min(int(query.get("per_page", 30)), 100))
    page = max(1, int(query.get("page", 1)))
    chunk = items[(page - 1) * per_page: page * per_page]
    last = max(1, -(-len(items) // per_page))
    rels = ([(page - 1, "prev")] if page > 1 else []) + ([(page + 1, "next"), (last, "last")] if page < last else []) \
        + ([(1, "first")] if page > 1 else [])
    if rels:
        link = ", ".join(f'<{base}{parts.path}?{urlencode({**query, "per_page": per_page, "page": n})}>; rel="{rel}"'
                         for n, rel in rels)
        extra = {**extra, "link": link}
    return chunk, extra


_TEMPLATE = Path(__file__).resolve().parent.parent / "fixtures" / "github" / "check_run.completed.json"


def _check_run_template() -> dict:
    return json.loads(_TEMPLATE.read_text())["check_run"]


def _review_comment_problem(comment: dict, patches: dict) -> str | None:
    """Why GitHub would refuse this review comment, or None."""
    path, side = comment.get("path"), comment.get("side", "RIGHT")
    if not patches.get(path):
        return f"Path could not be resolved: {path}"
    hunks = _shown_lines(patches[path], side)
    line, start = comment.get("line"), comment.get("start_line") or comment.get("line")
    if not any(line in hunk and start in hunk for hunk in hunks):
        return "Line could not be resolved"
    return None


def _position_lines(patch: str) -> dict[int, int | None]:
    """GitHub's positions in a file's patch (the first `@@` is 0, every later line one more, later
    headers included), each with the commit's line it shows (None for a removed line)."""
    found: dict[int, int | None] = {}
    new = 0
    for index, raw in enumerate(patch.split("\n")):
        header = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", raw)
        if header:
            new = int(header.group(1))
        elif index and raw[:1] in (" ", "+"):
            found[index], new = new, new + 1
        elif index and raw[:1] in ("-", "\\"):
            found[index] = None
    return found


def _shown_lines(patch: str, side: str) -> list[set]:
    hunks: list[set] = []
    old = new = 0
    for raw in patch.split("\n"):
        header = re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", raw)
        if header:
            old, new = int(header.group(1)), int(header.group(2))
            hunks.append(set())
        elif hunks and raw[:1] in (" ", "+", "-"):
            if raw[:1] != "-" and side == "RIGHT":
                hunks[-1].add(new)
            if raw[:1] != "+" and side == "LEFT":
                hunks[-1].add(old)
            old += raw[:1] != "+"
            new += raw[:1] != "-"
    return hunks


def _graphql_comment(comment: dict) -> dict:
    login = comment["user"]["login"]
    return {"databaseId": comment["id"], "authorAssociation": comment.get("author_association") or "NONE",
            "body": comment["body"], "author": {"login": login.removesuffix("[bot]")}}


def _user(login: str, kind: str = "User") -> dict:
    uid = zlib.crc32(login.encode()) % 10_000_000
    return shaped("simple-user", {"login": login, "id": uid, "type": kind, "node_id": f"U_{uid}",
                                  "html_url": f"https://github.com/{login}",
                                  "url": f"https://api.github.com/users/{login}"})


def _unprocessable(message: str) -> dict:
    return {"message": message, "documentation_url": "https://docs.github.com/rest"}


def _reaction(rid: int, content: str, login: str = "bot[bot]") -> dict:
    return {"id": rid, "node_id": f"REA_{rid}", "content": content,
            "user": _user(login, "Bot" if login.endswith("[bot]") else "User"),
            "created_at": _now()}


def _blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id


def _commit_sha(*seed: str) -> str:
    return hashlib.sha1("/".join(seed).encode()).hexdigest()


def _content_file(api: str, path: str, data: bytes) -> dict:
    sha = _blob_sha(data)
    links = {"self": f"{api}/contents/{path}", "git": f"{api}/git/blobs/{sha}",
             "html": f"https://github.com/{api.split('/repos/', 1)[1]}/blob/HEAD/{path}"}
    return {"type": "file", "path": path, "name": path.rsplit("/", 1)[-1], "sha": sha, "encoding": "base64",
            "size": len(data), "content": base64.b64encode(data).decode(), "url": links["self"],
            "git_url": links["git"], "html_url": links["html"], "download_url": None, "_links": links}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out")


def _public(run: dict) -> dict:
    return {k: v for k, v in run.items() if not k.startswith("_")}


def _refusal(message: str, operation: str) -> dict:
    return {"message": message, "documentation_url": f"https://docs.github.com/rest/checks/runs#{operation}",
            "status": "422"}


def _check_run_problem(body: dict) -> str | None:
    """Why GitHub would refuse this check-run write: a completed run without a conclusion, an output
    without title and summary, more than 50 annotations, an annotation missing a required field."""
    status, conclusion = body.get("status"), body.get("conclusion")
    if status == "completed" and not conclusion:
        return "Invalid request.\n\nconclusion is required when status is completed."
    if conclusion is not None and conclusion not in _CONCLUSIONS:
        return f"Invalid request.\n\n{conclusion!r} is not a valid conclusion."
    output = body.get("output") or {}
    notes = output.get("annotations") or []
    if output and (not output.get("title") or not output.get("summary")):
        return "Invalid request.\n\n\"title\" and \"summary\" weren't supplied."
    if len(notes) > 50:
        return "Invalid request.\n\nOnly 50 annotations may be sent per request."
    for note in notes:
        missing = [k for k in ("path", "start_line", "end_line", "annotation_level", "message") if k not in note]
        if missing or note.get("annotation_level") not in ("notice", "warning", "failure"):
            return f"Invalid request.\n\nAn annotation is invalid (missing {missing or 'nothing'})."
    return None


def _write_check_run(run: dict, body: dict) -> None:
    """A conclusion completes the run; annotations are appended to those already there."""
    if body.get("conclusion"):
        run.update(status="completed", conclusion=body["conclusion"], completed_at=body.get("completed_at") or _now())
    elif body.get("status"):
        run["status"] = body["status"]
    if output := body.get("output"):
        notes = output.get("annotations") or []
        run["output"].update(title=output["title"], summary=output["summary"], text=output.get("text"))
        run["_annotations"].extend({**note, "blob_href": f"{run['html_url']}/{note['path']}"} for note in notes)
        run["output"]["annotations_count"] = len(run["_annotations"])
    annotations = len((body.get("output") or {}).get("annotations") or [])
    run["_history"].append({"status": run["status"], "conclusion": run["conclusion"], "annotations": annotations})
