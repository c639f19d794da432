// The full restore's reader of pg_dumpall's SQL (pg_scan_dump in backups/scripts/lib/prelude.sh), with the awk of
// the postgres image (Debian: mawk) and busybox awk: the databases it lists for the texts of pgScanCases.ts (what
// psql does with each is checked against the real psql in postgresDump.integration.ts), the end marker only
// outside strings and COPY data, and the roles whose passwords it drops from the feed.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { SCAN_CASES } from './pgScanCases';
import { assertBinaries, describeNeeding, skipUnless, tempDir, which, withPrelude, type BinaryNeed } from './servers';

const NEEDS: BinaryNeed[] = [{ name: 'mawk', apt: 'mawk' }, { name: 'busybox', apt: 'busybox' }];
const END = '--\n-- PostgreSQL database cluster dump complete\n--\n\n';

/** A PATH folder whose awk is the given one. */
function awkPath(kind: 'mawk' | 'busybox'): string {
  const bin = tempDir(`awk-${kind}`).dir;
  if (kind === 'mawk') fs.symlinkSync(which('mawk')!, path.join(bin, 'awk'));
  else fs.writeFileSync(path.join(bin, 'awk'), `#!/bin/sh\nexec ${which('busybox')} awk "$@"\n`, { mode: 0o755 });
  return bin;
}

describeNeeding('pg_scan_dump reads pg_dumpall SQL as psql does (mawk, busybox awk)', { skip: skipUnless(NEEDS) }, () => {
  for (const kind of ['mawk', 'busybox'] as const) {
    const scan = async (sql: string, mode = 'list', roles = '', me = 'postgres', setpw = 'false') => {
      assertBinaries(NEEDS);
      const r = await withPrelude('pg_scan_dump "$1" "$2" "$3" "$4"', [mode, roles, me, setpw], { input: sql, pathPrepend: [awkPath(kind)] });
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    };
    const listed = (out: string) => out.split('\n').filter((l) => l.startsWith('db\t')).map((l) => l.slice(3));

    for (const c of SCAN_CASES) {
      test(`${kind}: ${c.name}`, async () => {
        const out = await scan(c.sql + END);
        if (c.refused) assert.match(out, /^bad\tline \d+: /m, out);
        else {
          assert.deepEqual(listed(out), c.dbs, out);
          assert.doesNotMatch(out, /^bad\t/m);
          assert.match(out, /^end\tcomplete$/m);
        }
      });
    }

    test(`${kind}: the end marker counts only outside strings and COPY data, and only at the end`, async () => {
      assert.match(await scan(`SELECT 1;\n${END}`), /^end\tcomplete$/m);
      assert.match(await scan(`COPY t (v) FROM stdin;\n-- PostgreSQL database cluster dump complete\n`), /^end\tincomplete$/m, 'inside COPY data');
      assert.match(await scan(`SELECT '\n-- PostgreSQL database cluster dump complete\n`), /^end\tincomplete$/m, 'inside a string');
      assert.match(await scan(`${END}\\connect shop\n`), /^end\tincomplete$/m, 'something after it');
    });

    test(`${kind}: roles: passwords of roles that exist are kept out of the feed, a comment quoting ALTER ROLE is left as it is`, async () => {
      const globals = [
        'CREATE ROLE app;',
        "ALTER ROLE app WITH NOSUPERUSER LOGIN PASSWORD 'SCRAM-SHA-256$4096:abc';",
        "COMMENT ON ROLE app IS 'x\nALTER ROLE app WITH LOGIN PASSWORD ''evil'';\n\\connect evil3\n';",
        'CREATE ROLE "odd\nrole";',
        'ALTER ROLE "odd\nrole" WITH LOGIN PASSWORD \'md5abc\';',
        'CREATE ROLE "we""ird WITH x";',
        'ALTER ROLE "we""ird WITH x" WITH LOGIN PASSWORD \'q\';',
        'ALTER ROLE newrole WITH LOGIN PASSWORD \'new\';',
        'ALTER ROLE app SET search_path TO public;',
        '\\connect shop',
        "ALTER ROLE app WITH PASSWORD 'not in the roles section';",
        '',
      ].join('\n');
      const roles = ['app', '"odd\\nrole"', '"we""ird WITH x"', 'postgres'].join('\n');
      const list = await scan(globals + END, 'list', roles, 'postgres', 'false');
      assert.deepEqual(list.split('\n').filter((l) => l.startsWith('role\t')), ['role\tkept\tapp', 'role\tkept\t"odd\\nrole"', 'role\tkept\t"we""ird WITH x"', 'role\tcreated\tnewrole']);
      const feed = await scan(globals + END, 'feed', roles, 'postgres', 'false');
      assert.equal(
        feed,
        (globals + END)
          .replace(" PASSWORD 'SCRAM-SHA-256$4096:abc'", '')
          .replace(" PASSWORD 'md5abc'", '')
          .replace(` PASSWORD 'q'`, ''),
        'only the PASSWORD of existing roles in the roles section is removed; the comment, the new role and what follows \\connect are as they were',
      );
      const setpw = await scan(globals + END, 'list', roles, 'app', 'true');
      assert.deepEqual(setpw.split('\n').filter((l) => l.startsWith('role\t')), ['role\tkept\tapp', 'role\tset\t"odd\\nrole"', 'role\tset\t"we""ird WITH x"', 'role\tcreated\tnewrole'], 'RESTORE_ROLE_PASSWORDS=true: the connecting role keeps its own');
    });
  }
});
