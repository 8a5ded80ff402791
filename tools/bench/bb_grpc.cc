// The Buildbarn runner benchmark's gRPC side: a Runner client, and a plain
// runner that runs each action as bb_runner does (spawn, wait, report),
// confining nothing, killing nothing but its child, proving nothing.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "bb/proto/resourceusage.pb.h"
#include "bb/proto/runner.grpc.pb.h"
#include "tools/bench/bb_grpc.h"

using buildbarn::resourceusage::POSIXResourceUsage;
using buildbarn::runner::CheckReadinessRequest;
using buildbarn::runner::Runner;
using buildbarn::runner::RunRequest;
using buildbarn::runner::RunResponse;

extern char **environ;

struct bbg_client {
	std::shared_ptr<grpc::Channel> channel;
	std::unique_ptr<Runner::Stub> stub;
};

extern "C" struct bbg_client *
bbg_connect(const char *socket_path)
{
	std::unique_ptr<bbg_client> c(new bbg_client);
	auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);

	// A channel that fails to connect backs off for a second and more:
	// made only once the runner has bound its socket.
	while (access(socket_path, F_OK) != 0) {
		if (std::chrono::steady_clock::now() > end)
			return nullptr;
		usleep(10000);
	}
	c->channel = grpc::CreateChannel(std::string("unix:") + socket_path,
	    grpc::InsecureChannelCredentials());
	c->stub = Runner::NewStub(c->channel);
	while (std::chrono::steady_clock::now() < end) {
		grpc::ClientContext ctx;
		CheckReadinessRequest req;
		google::protobuf::Empty resp;

		ctx.set_deadline(std::chrono::system_clock::now() +
		    std::chrono::seconds(5));
		if (c->stub->CheckReadiness(&ctx, req, &resp).ok())
			return c.release();
		usleep(20000);
	}
	return nullptr;
}

extern "C" void
bbg_close(struct bbg_client *c)
{
	delete c;
}

extern "C" int
bbg_run(struct bbg_client *c, const char *act, int n,
    const char *const *argv, int64_t *exit_code, char *msg, size_t len)
{
	grpc::ClientContext ctx;
	RunRequest req;
	RunResponse resp;
	std::string a(act), k = std::to_string(n);

	for (; *argv != nullptr; argv++)
		req.add_arguments(*argv);
	(*req.mutable_environment_variables())["PATH"] = "/usr/bin:/bin";
	req.set_stdout_path(a + "/stdout." + k);
	req.set_stderr_path(a + "/stderr." + k);
	req.set_input_root_directory(a + "/root");
	req.set_temporary_directory(a + "/tmp");
	ctx.set_deadline(std::chrono::system_clock::now() +
	    std::chrono::seconds(300));
	grpc::Status st = c->stub->Run(&ctx, req, &resp);
	if (!st.ok()) {
		snprintf(msg, len, "%d: %s", static_cast<int>(st.error_code()),
		    st.error_message().c_str());
		return -1;
	}
	*exit_code = resp.exit_code();
	return 0;
}

namespace {

void
Duration(const struct timeval &tv, google::protobuf::Duration *d)
{
	d->set_seconds(tv.tv_sec);
	d->set_nanos(static_cast<int32_t>(tv.tv_usec) * 1000);
}

// bb_runner's local runner, the least of it: no PATH search, no checks.
class Plain final : public Runner::Service {
public:
	explicit Plain(const char *build) : build_(build) {}

	grpc::Status CheckReadiness(grpc::ServerContext *,
	    const CheckReadinessRequest *, google::protobuf::Empty *) override
	{
		return grpc::Status::OK;
	}

	grpc::Status Run(grpc::ServerContext *, const RunRequest *req,
	    RunResponse *resp) override
	{
		std::vector<std::string> env;
		std::vector<char *> argv, envp;
		std::string cwd = build_ + "/" + req->input_root_directory() +
		    "/" + req->working_directory();
		posix_spawn_file_actions_t fa;
		struct rusage ru;
		int out, err, status;
		pid_t pid;

		if (req->arguments_size() == 0 || req->arguments(0)[0] != '/')
			return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
			    "argv[0] must be absolute here");
		for (const auto &a : req->arguments())
			argv.push_back(const_cast<char *>(a.c_str()));
		argv.push_back(nullptr);
		for (const auto &kv : req->environment_variables())
			env.push_back(kv.first + "=" + kv.second);
		for (auto &e : env)
			envp.push_back(&e[0]);
		envp.push_back(nullptr);
		out = open((build_ + "/" + req->stdout_path()).c_str(),
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		err = open((build_ + "/" + req->stderr_path()).c_str(),
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (out < 0 || err < 0) {
			if (out >= 0)
				close(out);
			return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
			    "cannot open stdout or stderr");
		}
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, out, 1);
		posix_spawn_file_actions_adddup2(&fa, err, 2);
		posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
		int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(),
		    envp.data());
		posix_spawn_file_actions_destroy(&fa);
		close(out);
		close(err);
		if (rc != 0)
			return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
			    std::string("Failed to start process: ") + strerror(rc));
		while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
			;
		POSIXResourceUsage usage;
		Duration(ru.ru_utime, usage.mutable_user_time());
		Duration(ru.ru_stime, usage.mutable_system_time());
		usage.set_maximum_resident_set_size(ru.ru_maxrss * 1024);
		if (WIFSIGNALED(status))
			usage.set_termination_signal(sigabbrev_np(WTERMSIG(status)));
		resp->set_exit_code(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		resp->add_resource_usage()->PackFrom(usage);
		return grpc::Status::OK;
	}

private:
	std::string build_;
};

} // namespace

extern "C" int
bbg_plain_runner(const char *socket_path, const char *build_dir)
{
	Plain service(build_dir);
	grpc::ServerBuilder builder;
	sigset_t stop;
	int sig;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, nullptr);
	builder.AddListeningPort(std::string("unix:") + socket_path,
	    grpc::InsecureServerCredentials());
	builder.RegisterService(&service);
	std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
	if (server == nullptr) {
		fprintf(stderr, "plain runner: cannot serve on %s\n", socket_path);
		return 1;
	}
	while (sigwait(&stop, &sig) != 0)
		;
	server->Shutdown(std::chrono::system_clock::now());
	server->Wait();
	return 0;
}
