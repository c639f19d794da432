// SQL texts that decide which databases a full restore writes into, and what psql itself connects to when it
// reads each one: pgScanDump.test.ts checks that the restore's reader (pg_scan_dump in the shared prelude)
// lists exactly `dbs` for each; postgresDump.integration.ts feeds each text to the real psql 15 and checks,
// from the server's log of the connections psql made, that `dbs` is what psql does (the oracle).
export interface ScanCase {
  name: string;
  sql: string;
  /** The databases psql connects to, in order (first time each; the starting database and template1 left out). */
  dbs: string[];
  /** A \connect the restore does not follow as written (it refuses the dump instead of guessing). */
  refused?: boolean;
}

/** Databases the oracle server must have for these texts (psql can only connect to those that exist). */
export const SCAN_DATABASES = ['shop', 'MyDb', 'user', `it's "odd" \\ x`, 'tab\tdb', 'after', 'a b', 'sq db', 'evil', 'evil2', 'evil3', 'evil4', 'evil5', 'evil6'];

export const SCAN_CASES: ScanCase[] = [
  { name: 'a plain \\connect', sql: '\\connect shop\n', dbs: ['shop'] },
  { name: 'a quoted name keeps its case (pg_dumpall quotes MyDb)', sql: '\\connect "MyDb"\n', dbs: ['MyDb'] },
  { name: 'a quoted keyword (pg_dumpall quotes user)', sql: '\\connect "user"\n', dbs: ['user'] },
  {
    name: 'pg_dumpall\'s -reuse-previous=on with a connection string: quotes and a backslash',
    sql: `\\connect -reuse-previous=on "dbname='it\\'s ""odd"" \\\\ x'"\n`,
    dbs: [`it's "odd" \\ x`],
  },
  { name: 'a TAB in the name', sql: `\\connect -reuse-previous=on "dbname='tab\tdb'"\n`, dbs: ['tab\tdb'] },
  {
    name: 'an index comment holding a line "COPY staging FROM stdin;" and a \\connect line (a string, not a statement)',
    sql: "COMMENT ON DATABASE postgres IS 'line one\nCOPY staging FROM stdin;\n\\connect evil\nline four';\n\\connect -reuse-previous=on \"dbname='tab\tdb'\"\n\\connect after\n",
    dbs: ['tab\tdb', 'after'],
  },
  {
    name: 'an E\'...\' string with an escaped quote, spanning lines',
    sql: "SELECT E'it\\'s\n\\\\connect evil\n\\connect evil2\n';\n\\connect after\n",
    dbs: ['after'],
  },
  {
    name: 'a dollar-quoted function body with a \\connect line',
    sql: 'CREATE OR REPLACE FUNCTION public.f() RETURNS text LANGUAGE plpgsql AS $body$\nBEGIN\nRETURN \'x\n\\connect evil\n\';\nEND $body$;\n\\connect after\n',
    dbs: ['after'],
  },
  { name: 'nested block comments', sql: '/* a /* b */\n\\connect evil\n*/\n\\connect after\n', dbs: ['after'] },
  { name: 'a line comment holding a quote', sql: "-- it's\n\\connect after\n", dbs: ['after'] },
  { name: 'a quoted identifier holding a quote and a line break', sql: 'SELECT 1 AS "it\'s\n\\connect evil";\n\\connect after\n', dbs: ['after'] },
  {
    name: 'COPY data holding a \\connect line and the end marker of a string',
    sql: "COPY public.t (v) FROM stdin;\n\\connect evil\n'\n\\.\n\\connect after\n",
    dbs: ['after'],
  },
  {
    name: 'a COPY statement spanning lines, its data after the line of its semicolon',
    sql: 'COPY public.t\n  (v)\n  FROM stdin;\n\\connect evil\n\\.\n\\connect after\n',
    dbs: ['after'],
  },
  {
    name: 'a semicolon inside parentheses does not end the statement (no COPY there)',
    sql: 'SELECT (\nCOPY t FROM stdin;\n1);\n\\connect after\n',
    dbs: ['after'],
  },
  {
    name: 'a BEGIN ATOMIC body: its semicolons do not end the CREATE FUNCTION (no COPY there)',
    sql: 'CREATE FUNCTION public.g() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1;\nCOPY t FROM stdin;\nEND;\n\\connect after\n',
    dbs: ['after'],
  },
  {
    name: 'standard_conforming_strings = off: a backslash escapes the quote',
    sql: "SET standard_conforming_strings = off;\nSELECT 'a\\'\n\\connect evil\n';\nSET standard_conforming_strings = on;\n\\connect after\n",
    dbs: ['after'],
  },
  { name: 'the short form \\c and a dequoted connection string with a space', sql: '\\c "dbname=\'a b\'"\n', dbs: ['a b'] },
  { name: 'a single-quoted argument', sql: "\\connect 'sq db'\n", dbs: ['sq db'] },
  { name: 'an escaped semicolon (\\;) does not start a backslash command', sql: 'SELECT 1 \\; SELECT 2;\n\\connect after\n', dbs: ['after'] },
  {
    name: 'a \\connect in \\restrict mode is refused by psql: the restore refuses the dump',
    sql: '\\restrict k1\n\\connect evil\n\\unrestrict k1\n\\connect after\n',
    dbs: ['after'],
    refused: true,
  },
  { name: 'a connection URI: not followed, the dump is refused', sql: '\\connect postgresql:///shop\n', dbs: ['shop'], refused: true },
];
