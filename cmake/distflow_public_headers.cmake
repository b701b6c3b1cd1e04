# The headers `cmake --install` puts under include/distflow: the API a
# program built against the installed package uses, and every distflow
# header those include (directly or through others), nothing else. The
# runtime's internals (the executor's state, the master and worker, the RPC
# services, the verbs transport, ...) stay out unless an API header needs
# them. The README's "Using distflow from your own project" lists the API.
#
# API headers, relative to src/distflow:
set(DISTFLOW_API_HEADER_GLOBS
  # The client API: scopes, op wrappers, sessions, datasets, control flow.
  cc/*.h cc/ops/*.h
  # Variables, optimizers, savers, learning rates, device setters.
  training/*.h
  gradients/gradients.h
  # Tensors, shapes, dtypes, status.
  framework/tensor.h framework/tensor_shape.h framework/types.h core/status.h
  # Sessions by target ("" in process, "grpc://" a cluster) and a server in
  # this process.
  common_runtime/session.h distributed_runtime/rpc/grpc_server.h
  distributed_runtime/cluster_spec.h
  # Parameter-server training from one client.
  coordinator/cluster_coordinator.h coordinator/parameter_server_strategy.h
  coordinator/remote_value.h coordinator/per_worker_values.h
  # Loading and writing SavedModels.
  saved_model/loader.h saved_model/writer.h)

# distflow_public_headers(SRC_DIR OUT): OUT gets the API headers and their
# distflow include closure, as paths relative to SRC_DIR (src/distflow).
function(distflow_public_headers src_dir out)
  set(pending "")
  foreach(glob IN LISTS DISTFLOW_API_HEADER_GLOBS)
    file(GLOB found RELATIVE ${src_dir} ${src_dir}/${glob})
    list(APPEND pending ${found})
  endforeach()
  set(seen "")
  set(include_re "^[ \t]*#[ \t]*include[ \t]*\"distflow/([^\"]*)\".*")
  while(pending)
    list(POP_FRONT pending header)
    if(header IN_LIST seen OR NOT EXISTS ${src_dir}/${header})
      continue()  # generated protos are installed from the build tree
    endif()
    list(APPEND seen ${header})
    file(STRINGS ${src_dir}/${header} includes REGEX "${include_re}")
    foreach(inc IN LISTS includes)
      string(REGEX REPLACE "${include_re}" "\\1" inc "${inc}")
      list(APPEND pending ${inc})
    endforeach()
  endwhile()
  list(SORT seen)
  set(${out} ${seen} PARENT_SCOPE)
endfunction()
