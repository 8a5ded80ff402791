/*
 * A job's plan as plan.c alone makes it (plan_build, plan_root), from a
 * spec and what the machine allows (struct job_env, set here by hand):
 * the shape every starter reads, the helper's job.c and the benchmark's
 * floors alike. A job in namespaces of its own is planned under its init
 * (its filter, its own /proc and /dev); one without, with none; where
 * not even a view can be made, refused unless waived; a requirement that
 * cannot be met, refused, nothing made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/backend/seccomp.h"
#include "helper/engine/env.h"
#include "helper/engine/plan.h"

static char root[256];
static const char *const true_argv[] = { "true", NULL };

static int
setup(void **state)
{
	const char *t = getenv("TEST_TMPDIR");

	(void)state;
	snprintf(root, sizeof(root), "%s/plan.XXXXXX", t != NULL ? t : "/tmp");
	return mkdtemp(root) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	return rmdir(root);
}

/* A machine with namespaces (ns), or a view only, or neither. */
static void
env_make(struct job_env *env, bool ns, bool view_ok, bool sup_ok)
{
	memset(env, 0, sizeof(*env));
	assert_int_equal(ident_self(&env->self), 0);
	env->landlock_abi = 6;
	seccomp_program(SECCOMP_SHARED, &env->seccomp);
	seccomp_program(SECCOMP_OWN, &env->seccomp_own);
	seccomp_program(SECCOMP_OWN_NET, &env->seccomp_own_net);
	assert_true(env->seccomp.count > 0);
	env->ns = ns;
	env->ns_err = ns ? 0 : -ENOTSUP;
	env->view_ok = ns || view_ok;
	env->view_err = env->view_ok ? 0 : -EPERM;
	env->view_op = env->view_ok ? OP_NONE : OP_UNSHARE_MOUNT;
	env->sup_ok = ns && sup_ok;
}

static void
spec_make(struct confine_spec *s, unsigned flags)
{
	confine_spec_init(s);
	s->backend = CONFINE_BACKEND_LANDLOCK;
	s->exe = "/bin/true";
	s->argv = true_argv;
	s->scratch = root;
	s->flags = CONFINE_NO_TMP | flags;
}

/* 0, or the refusal's -errno with *why; p made either way. */
static int
plan_make(struct plan *p, const struct confine_spec *s,
    const struct job_env *env, const char **why)
{
	int rc;

	*why = NULL;
	rc = plan_build(p, s, env, NULL, why);
	if (rc == 0)
		rc = plan_root(p, s, env, why);
	return rc;
}

static void
in_namespaces_it_is_planned_under_its_init(void **state)
{
	struct job_env env;
	struct confine_spec s;
	const char *why;
	struct plan p;
	int sup;

	(void)state;
	for (sup = 0; sup < 2; sup++) {
		env_make(&env, true, true, sup);
		spec_make(&s, 0);
		assert_int_equal(plan_make(&p, &s, &env, &why), 0);
		assert_true(p.child.in_init);
		assert_true(p.child.own_session);
		assert_false(p.child.bare);
		assert_int_equal(p.child.init_userns, env.self.uid != 0);
		assert_int_equal(p.child.init_uid, env.self.uid);
		assert_int_equal(p.child.init_gid, env.self.gid);
		/* Its IPC its own; its sockets where its init supervises them. */
		assert_ptr_equal(p.child.seccomp, sup ? &env.seccomp_own_net :
		    &env.seccomp_own);
		assert_true(p.child.view.own_proc);
		assert_true(p.child.view.own_dev);
		assert_true(p.policy.own_dev);
		assert_string_equal(p.child.view.root.path, p.scratch);
		assert_string_equal(p.policy.scratch, p.scratch);
		assert_string_equal(p.child.cwd, p.scratch);
		plan_free(&p);
	}
}

static void
without_namespaces_it_makes_its_own_view(void **state)
{
	struct job_env env;
	struct confine_spec s;
	const char *why;
	struct plan p;

	(void)state;
	env_make(&env, false, true, true);
	spec_make(&s, 0);
	assert_int_equal(plan_make(&p, &s, &env, &why), 0);
	assert_false(p.child.in_init);
	assert_false(p.child.bare);
	assert_true(p.child.own_session);
	/* The shared filter; Landlock the wall that scopes its signals. */
	assert_ptr_equal(p.child.seccomp, &env.seccomp);
	assert_ptr_equal(p.child.landlock, &p.landlock);
	assert_false(p.child.view.own_proc);
	assert_false(p.child.view.own_dev);
	assert_string_equal(p.child.view.root.path, p.scratch);
	plan_free(&p);

	/* Namespaces required: refused. */
	spec_make(&s, CONFINE_REQUIRE_NAMESPACES);
	assert_int_equal(plan_make(&p, &s, &env, &why), -ENOTSUP);
	assert_non_null(strstr(why, "namespaces of its own were required"));
	plan_free(&p);

	/* Landlock too old to scope signals without namespaces: refused. */
	env.landlock_abi = 5;
	spec_make(&s, 0);
	assert_int_equal(plan_make(&p, &s, &env, &why), -ENOTSUP);
	assert_non_null(strstr(why, "6 needed without namespaces"));
	plan_free(&p);
}

static void
without_any_namespace_it_is_bare_if_waived(void **state)
{
	struct job_env env;
	struct confine_spec s;
	const char *why;
	struct plan p;

	(void)state;
	env_make(&env, false, false, false);
	spec_make(&s, 0);
	assert_int_equal(plan_make(&p, &s, &env, &why), -ENOTSUP);
	assert_non_null(strstr(why, "CONFINE_WAIVE_METADATA"));
	assert_int_equal(p.op, OP_UNSHARE_MOUNT);
	assert_int_equal(p.op_err, EPERM);
	plan_free(&p);

	/* Waived, as another user than root (root's runs as 65534). */
	if (env.self.uid == 0)
		env.self.uid = 1;
	spec_make(&s, CONFINE_WAIVE_METADATA);
	assert_int_equal(plan_make(&p, &s, &env, &why), 0);
	assert_true(p.child.bare);
	assert_false(p.child.in_init);
	assert_null(p.child.become);
	plan_free(&p);
}

static void
the_macos_path_leads_no_session(void **state)
{
	struct job_env env;
	struct confine_spec s;
	const char *why;
	struct plan p;

	(void)state;
	env_make(&env, false, true, false);
	env.group_proof_only = true;
	spec_make(&s, 0);
	assert_int_equal(plan_make(&p, &s, &env, &why), 0);
	assert_false(p.child.own_session);
	plan_free(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_namespaces_it_is_planned_under_its_init),
		cmocka_unit_test(without_namespaces_it_makes_its_own_view),
		cmocka_unit_test(without_any_namespace_it_is_bare_if_waived),
		cmocka_unit_test(the_macos_path_leads_no_session),
	};

	return cmocka_run_group_tests_name("plan", tests, setup, teardown);
}
