//! The Kubernetes manifests of a sharded run, as YAML text: a ConfigMap holding the workload and
//! its data files, a Secret holding what the workload marks secret (CSV files with `secret:
//! true`, the environment values its templates read), and an Indexed Job whose pod `i` plays
//! shard `i`. A secret never reaches the ConfigMap or the Job's arguments: the pods see the files
//! in /plan (one projected volume) and the values as environment variables. Strings are written as JSON
//! strings (valid YAML), so no file content can break the document.

use std::fmt::Write;

/// What the manifests say: a workload, its data files and secrets, and how the pods run it.
pub struct Bundle {
    pub name: String,
    pub namespace: Option<String>,
    pub image: String,
    pub shards: u64,
    pub cpu: String,
    pub memory: String,
    /// RFC 3339, whole seconds.
    pub start_at: String,
    /// The workload file's name inside /plan.
    pub workload: String,
    /// (ConfigMap key, path under /plan, content) for the workload and each data file.
    pub files: Vec<(String, String, String)>,
    /// The same for the data files marked `secret: true`: they go into the Secret.
    pub secret_files: Vec<(String, String, String)>,
    /// (variable, value) for each `env('NAME')` the workload reads: into the Secret too.
    pub env: Vec<(String, String)>,
    /// Where every pod pushes its series (`--prometheus-remote-write`).
    pub remote_write: Option<String>,
    /// Where every pod pushes its metrics over OTLP (`--otlp`).
    pub otlp: Option<String>,
}

/// The Secret's key of an environment value: the prefix keeps it apart from a data file's key.
fn env_key(name: &str) -> String {
    format!("env.{name}")
}

fn secret_name(s: &Bundle) -> String {
    format!("{}-secrets", s.name)
}

/// The Secret, if the workload has anything secret.
pub(crate) fn secret(s: &Bundle) -> Option<String> {
    if s.secret_files.is_empty() && s.env.is_empty() {
        return None;
    }
    let mut out = String::from(
        "# What the workload marks secret: its CSV files with `secret: true` and the environment\n\
         # values its templates read with env(). Holds credentials: keep it out of version control.\n",
    );
    out.push_str("apiVersion: v1\nkind: Secret\ntype: Opaque\n");
    metadata(&mut out, &secret_name(s), s);
    out.push_str("stringData:\n");
    for (key, _, content) in &s.secret_files {
        let _ = writeln!(out, "  {}: {}", q(key), q(content));
    }
    for (name, value) in &s.env {
        let _ = writeln!(out, "  {}: {}", q(&env_key(name)), q(value));
    }
    Some(out)
}

fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

fn metadata(out: &mut String, name: &str, s: &Bundle) {
    let _ = writeln!(out, "metadata:\n  name: {}", q(name));
    if let Some(ns) = &s.namespace {
        let _ = writeln!(out, "  namespace: {}", q(ns));
    }
    let _ = writeln!(
        out,
        "  labels:\n    app.kubernetes.io/name: herd\n    herd.dev/run: {}",
        q(&s.name)
    );
}

pub(crate) fn config_map(s: &Bundle) -> String {
    let mut out =
        String::from("# The plan every shard runs: the workload file and its data files.\n");
    out.push_str("apiVersion: v1\nkind: ConfigMap\n");
    metadata(&mut out, &format!("{}-plan", s.name), s);
    out.push_str("data:\n");
    for (key, _, content) in &s.files {
        let _ = writeln!(out, "  {}: {}", q(key), q(content));
    }
    out
}

pub(crate) fn job(s: &Bundle) -> String {
    let mut out = String::from(
        "# One pod per shard (Indexed Job): pod i runs `herd run --shard i/N`, all start on one\n\
         # instant, and each prints its result as a framed block: `herd k8s collect` reads the logs.\n\
         # A shard is never retried (a retry would replay its load late, doubling it): per-index\n\
         # backoff 0, and exit code 7 (\"ready after the start instant\") fails its index at once.\n",
    );
    out.push_str("apiVersion: batch/v1\nkind: Job\n");
    metadata(&mut out, &s.name, s);
    job_spec(&mut out, s);
    job_args(&mut out, s);
    job_volumes(&mut out, s);
    out
}

/// The Job's spec down to the container's arguments: one pod per index, never retried, spread
/// over the nodes, locked down.
fn job_spec(out: &mut String, s: &Bundle) {
    let n = s.shards;
    let _ = write!(
        out,
        "spec:
  completionMode: Indexed
  completions: {n}
  parallelism: {n}
  backoffLimitPerIndex: 0
  maxFailedIndexes: {n}
  podReplacementPolicy: Failed
  ttlSecondsAfterFinished: 86400
  podFailurePolicy:
    rules:
      - action: FailIndex
        onExitCodes:
          containerName: herd
          operator: In
          values: [7]
      - action: FailIndex
        onPodConditions:
          - type: DisruptionTarget
            status: 'True'
  template:
    metadata:
      labels:
        app.kubernetes.io/name: herd
        herd.dev/run: {name}
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      enableServiceLinks: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 10001
        runAsGroup: 10001
        seccompProfile:
          type: RuntimeDefault
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: DoNotSchedule
          labelSelector:
            matchLabels:
              herd.dev/run: {name}
      containers:
        - name: herd
          image: {image}
          imagePullPolicy: IfNotPresent
          args:
",
        name = q(&s.name),
        image = q(&s.image),
    );
}

/// The container's arguments: `herd run` of the workload as shard JOB_COMPLETION_INDEX.
fn job_args(out: &mut String, s: &Bundle) {
    let n = s.shards;
    let push = s
        .remote_write
        .iter()
        .flat_map(|u| ["--prometheus-remote-write".to_owned(), u.clone()])
        .chain(s.otlp.iter().flat_map(|u| ["--otlp".to_owned(), u.clone()]));
    let args = [
        "run".to_owned(),
        format!("/plan/{}", s.workload),
        "--shard-from-env".into(),
        "JOB_COMPLETION_INDEX".into(),
        "--shards".into(),
        n.to_string(),
        "--start-at".into(),
        s.start_at.clone(),
        "--quiet".into(),
    ];
    for a in args.into_iter().chain(push) {
        let _ = writeln!(out, "            - {}", q(&a));
    }
}

/// The container's environment, resources and mounts, and the volume of the plan's files.
fn job_volumes(out: &mut String, s: &Bundle) {
    let _ = write!(
        out,
        "{env}          resources:
            requests:
              cpu: {cpu}
              memory: {mem}
            limits:
              cpu: {cpu}
              memory: {mem}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: [ALL]
          volumeMounts:
            - name: plan
              mountPath: /plan
              readOnly: true
      volumes:
        - name: plan
          projected:
            sources:
              - configMap:
                  name: {cm}
                  items:
",
        cpu = q(&s.cpu),
        mem = q(&s.memory),
        cm = q(&format!("{}-plan", s.name)),
        env = env(s),
    );
    let items = |out: &mut String, files: &[(String, String, String)]| {
        for (key, path, _) in files {
            let _ = writeln!(
                out,
                "                    - key: {}\n                      path: {}",
                q(key),
                q(path)
            );
        }
    };
    items(out, &s.files);
    if !s.secret_files.is_empty() {
        let _ = writeln!(
            out,
            "              - secret:\n                  name: {}\n                  items:",
            q(&secret_name(s))
        );
        items(out, &s.secret_files);
    }
}

/// The container's environment: each value the workload reads, from the Secret.
fn env(s: &Bundle) -> String {
    let mut out = String::new();
    if s.env.is_empty() {
        return out;
    }
    out.push_str("          env:\n");
    for (name, _) in &s.env {
        let _ = writeln!(
            out,
            "            - name: {}\n              valueFrom:\n                secretKeyRef:\n                  name: {}\n                  key: {}",
            q(name),
            q(&secret_name(s)),
            q(&env_key(name))
        );
    }
    out
}
