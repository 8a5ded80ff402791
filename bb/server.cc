// Buildbarn's Runner service on gRPC's C++ callback API, each call handed
// to the runner in C (runner.h). This file only moves fields between the
// protobuf messages and C structs, and calls in and out of gRPC.
//
// A Run's job is waited for on a thread of its own: gRPC's callback threads
// must never block. The call's cancel (the client's, its deadline, or
// bbserve_stop) reaches the job through OnCancel, on whatever thread gRPC
// runs it; the call answers only once its job has settled.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "bb/proto/resourceusage.pb.h"
#include "bb/proto/runner.grpc.pb.h"

#include "bb/server.h"

namespace {

using buildbarn::resourceusage::POSIXResourceUsage;
using buildbarn::runner::CheckReadinessRequest;
using buildbarn::runner::RunRequest;
using buildbarn::runner::RunResponse;

grpc::Status
ToStatus(const struct bbreply &reply)
{
	return grpc::Status(static_cast<grpc::StatusCode>(reply.code),
	    reply.message);
}

// A protobuf string as C: refused when it holds a NUL, which C would cut.
bool
CString(const std::string &s, const char **out)
{
	*out = s.c_str();
	return std::strlen(*out) == s.size();
}

// The call's time left in milliseconds, -1 for none.
int64_t
TimeLeft(const grpc::CallbackServerContext *ctx)
{
	auto deadline = ctx->deadline();

	if (deadline == std::chrono::system_clock::time_point::max())
		return -1;
	auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
	    deadline - std::chrono::system_clock::now()).count();
	return left > 0 ? left : 0;
}

void
Duration(int64_t us, google::protobuf::Duration *d)
{
	d->set_seconds(us / 1000000);
	d->set_nanos(static_cast<int32_t>(us % 1000000) * 1000);
}

class RunReactor final : public grpc::ServerUnaryReactor {
public:
	RunReactor(struct bbrun *r, grpc::CallbackServerContext *ctx,
	    const RunRequest *req, RunResponse *resp)
	    : call_(bbrun_call_new(r)), ctx_(ctx), req_(req), resp_(resp)
	{
		if (call_ == nullptr) {
			Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
			    "out of memory"));
			return;
		}
		try {
			std::thread(&RunReactor::Work, this).detach();
		} catch (const std::system_error &e) {
			Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
			    std::string("no thread for the call: ") + e.what()));
		}
	}

	void OnCancel() override { bbrun_call_cancel(call_); }

	void OnDone() override
	{
		bbrun_call_free(call_);
		delete this;
	}

private:
	void Work()
	{
		std::vector<const char *> argv, names, values;
		struct bbreq req;
		struct bbreply reply;

		std::memset(&req, 0, sizeof(req));
		for (const auto &a : req_->arguments()) {
			argv.push_back(nullptr);
			if (!CString(a, &argv.back()))
				return Refuse("arguments");
		}
		argv.push_back(nullptr);
		for (const auto &kv : req_->environment_variables()) {
			names.push_back(nullptr);
			values.push_back(nullptr);
			if (!CString(kv.first, &names.back()) ||
			    !CString(kv.second, &values.back()))
				return Refuse("environment_variables");
		}
		req.argv = argv.data();
		req.argc = argv.size() - 1;
		req.env_names = names.data();
		req.env_values = values.data();
		req.nenv = names.size();
		if (!CString(req_->working_directory(), &req.working_directory) ||
		    !CString(req_->stdout_path(), &req.stdout_path) ||
		    !CString(req_->stderr_path(), &req.stderr_path) ||
		    !CString(req_->input_root_directory(),
		    &req.input_root_directory) ||
		    !CString(req_->temporary_directory(),
		    &req.temporary_directory) ||
		    !CString(req_->server_logs_directory(),
		    &req.server_logs_directory))
			return Refuse("a path");
		bbrun_call_run(call_, &req, TimeLeft(ctx_), &reply);
		if (reply.code == BBREPLY_OK) {
			POSIXResourceUsage usage;

			Duration(reply.user_us, usage.mutable_user_time());
			Duration(reply.sys_us, usage.mutable_system_time());
			usage.set_maximum_resident_set_size(reply.max_rss_bytes);
			usage.set_termination_signal(reply.signal);
			resp_->set_exit_code(reply.exit_code);
			resp_->add_resource_usage()->PackFrom(usage);
		}
		// The last touch of this object: OnDone may follow at once.
		Finish(ToStatus(reply));
	}

	void Refuse(const char *field)
	{
		Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
		    std::string(field) + " holds a NUL byte"));
	}

	struct bbrun_call *call_;
	grpc::CallbackServerContext *ctx_;
	const RunRequest *req_;
	RunResponse *resp_;
};

class Service final : public buildbarn::runner::Runner::CallbackService {
public:
	explicit Service(struct bbrun *r) : r_(r) {}

	grpc::ServerUnaryReactor *CheckReadiness(
	    grpc::CallbackServerContext *ctx, const CheckReadinessRequest *req,
	    google::protobuf::Empty *) override
	{
		grpc::ServerUnaryReactor *reactor = ctx->DefaultReactor();
		struct bbreply reply;
		const char *path;

		if (!CString(req->path(), &path)) {
			reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL,
			    "path holds a NUL byte"));
			return reactor;
		}
		bbrun_check_readiness(r_, path, &reply);
		reactor->Finish(ToStatus(reply));
		return reactor;
	}

	grpc::ServerUnaryReactor *Run(grpc::CallbackServerContext *ctx,
	    const RunRequest *req, RunResponse *resp) override
	{
		return new RunReactor(r_, ctx, req, resp);
	}

private:
	struct bbrun *r_;
};

} // namespace

struct bbserve {
	explicit bbserve(struct bbrun *r) : service(r) {}

	Service service;
	std::unique_ptr<grpc::Server> server;
};

extern "C" int
bbserve_start(struct bbserve **sp, struct bbrun *r, const char *path,
    unsigned mode, char *why, size_t whylen)
{
	std::unique_ptr<bbserve> s(new bbserve(r));
	grpc::ServerBuilder builder;
	mode_t old;

	builder.AddListeningPort(std::string("unix:") + path,
	    grpc::InsecureServerCredentials());
	builder.RegisterService(&s->service);
	// Born with its mode: never reachable by more than asked, even briefly
	// (gRPC binds it, replacing whatever socket was there: main.c has
	// made sure none was in use).
	old = umask(~mode & 0777);
	s->server = builder.BuildAndStart();
	umask(old);
	if (s->server == nullptr) {
		snprintf(why, whylen, "gRPC cannot serve on %s", path);
		return -1;
	}
	*sp = s.release();
	return 0;
}

extern "C" void
bbserve_stop(struct bbserve *s)
{
	// Every call still in flight is cancelled at once, then waited for.
	s->server->Shutdown(std::chrono::system_clock::now());
	s->server->Wait();
	delete s;
}
