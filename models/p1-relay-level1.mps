* Source:     Pyomo MPS Writer
* Format:     Free MPS
*
NAME bace_opt_P1_placement
OBJSENSE
 MIN
ROWS
 N  obj_count
 L  c_u_con_position_one(0_1)_
 L  c_u_con_position_one(0_2)_
 E  c_e_con_position_first(0)_
 L  c_u_con_position_contiguous(0_1)_
 L  c_u_con_region_once(0_0)_
 L  c_u_con_region_once(0_1)_
 E  c_e_con_stages_total(0)_
 L  c_u_con_stages_min(0_0)_
 L  c_u_con_stages_min(0_1)_
 L  c_u_con_stages_max(0_0)_
 L  c_u_con_stages_max(0_1)_
 L  c_u_con_hop_source_le(0_1_0)_
 L  c_u_con_hop_source_le(0_1_1)_
 E  c_e_con_hop_source_one(0_1)_
 E  c_e_con_flow(0_1_0)_
 E  c_e_con_flow(0_1_1)_
 E  c_e_con_flow(0_1_2)_
 L  c_u_con_flow_in(0_1_2)_
 L  c_u_con_flow_out(0_1_2)_
 L  c_u_con_link_once(0_1_1)_
 L  c_u_con_link_once(0_1_2)_
 L  c_u_con_gpus(0)_
 L  c_u_con_gpus(1)_
 L  c_u_con_bandwidth(1)_
 L  c_u_con_bandwidth(2)_
 L  c_u_con_cost_product(0_1_1)_
 L  c_u_con_cost_product(0_1_2)_
 L  c_u_con_cost_product_min(0_1_1)_
 L  c_u_con_cost_product_min(0_1_2)_
 L  c_u_con_sym_reverse(0)_
COLUMNS
     x(0) obj_count -1
     x(0) c_e_con_position_first(0)_ -1
     x(0) c_e_con_stages_total(0)_ -6
     a(0_1_0) c_u_con_position_one(0_1)_ 1
     a(0_1_0) c_e_con_position_first(0)_ 1
     a(0_1_0) c_u_con_position_contiguous(0_1)_ -1
     a(0_1_0) c_u_con_region_once(0_0)_ 1
     a(0_1_0) c_u_con_stages_min(0_0)_ 1
     a(0_1_0) c_u_con_stages_max(0_0)_ -3
     a(0_1_0) c_u_con_hop_source_le(0_1_0)_ -1
     a(0_1_1) c_u_con_position_one(0_1)_ 1
     a(0_1_1) c_e_con_position_first(0)_ 1
     a(0_1_1) c_u_con_position_contiguous(0_1)_ -1
     a(0_1_1) c_u_con_region_once(0_1)_ 1
     a(0_1_1) c_u_con_stages_min(0_1)_ 1
     a(0_1_1) c_u_con_stages_max(0_1)_ -3
     a(0_1_1) c_u_con_hop_source_le(0_1_1)_ -1
     a(0_2_0) c_u_con_position_one(0_2)_ 1
     a(0_2_0) c_u_con_position_contiguous(0_1)_ 1
     a(0_2_0) c_u_con_region_once(0_0)_ 1
     a(0_2_0) c_u_con_stages_min(0_0)_ 1
     a(0_2_0) c_u_con_stages_max(0_0)_ -3
     a(0_2_0) c_e_con_hop_source_one(0_1)_ -1
     a(0_2_0) c_e_con_flow(0_1_0)_ 1
     a(0_2_1) c_u_con_position_one(0_2)_ 1
     a(0_2_1) c_u_con_position_contiguous(0_1)_ 1
     a(0_2_1) c_u_con_region_once(0_1)_ 1
     a(0_2_1) c_u_con_stages_min(0_1)_ 1
     a(0_2_1) c_u_con_stages_max(0_1)_ -3
     a(0_2_1) c_e_con_hop_source_one(0_1)_ -1
     a(0_2_1) c_e_con_flow(0_1_1)_ 1
     a(0_2_1) c_u_con_sym_reverse(0)_ -1
     n(0_0_0) c_e_con_stages_total(0)_ 1
     n(0_0_0) c_u_con_stages_min(0_0)_ -1
     n(0_0_0) c_u_con_stages_max(0_0)_ 1
     n(0_0_0) c_u_con_gpus(0)_ 1
     n(0_0_0) c_u_con_cost_product(0_1_1)_ 8.3333333333333337e-06
     n(0_0_0) c_u_con_cost_product(0_1_2)_ 8.3333333333333337e-06
     n(0_1_0) c_e_con_stages_total(0)_ 1
     n(0_1_0) c_u_con_stages_min(0_1)_ -1
     n(0_1_0) c_u_con_stages_max(0_1)_ 1
     n(0_1_0) c_u_con_gpus(1)_ 1
     n(0_1_0) c_u_con_cost_product(0_1_1)_ 8.3333333333333337e-06
     n(0_1_0) c_u_con_cost_product(0_1_2)_ 8.3333333333333337e-06
     h(0_1_0) c_u_con_hop_source_le(0_1_0)_ 1
     h(0_1_0) c_e_con_hop_source_one(0_1)_ 1
     h(0_1_0) c_e_con_flow(0_1_0)_ -1
     h(0_1_1) c_u_con_hop_source_le(0_1_1)_ 1
     h(0_1_1) c_e_con_hop_source_one(0_1)_ 1
     h(0_1_1) c_e_con_flow(0_1_1)_ -1
     h(0_1_1) c_u_con_sym_reverse(0)_ 1
     f(0_1_1_0) c_e_con_flow(0_1_0)_ 1
     f(0_1_1_0) c_e_con_flow(0_1_2)_ -1
     f(0_1_1_0) c_u_con_flow_in(0_1_2)_ 1
     f(0_1_1_0) c_u_con_link_once(0_1_1)_ 1
     f(0_1_1_0) c_u_con_bandwidth(1)_ 4
     f(0_1_1_0) c_u_con_cost_product(0_1_1)_ 5.0000000000000002e-05
     f(0_1_1_0) c_u_con_cost_product_min(0_1_1)_ 5.0000000000000002e-05
     f(0_1_1_1) c_e_con_flow(0_1_0)_ -1
     f(0_1_1_1) c_e_con_flow(0_1_2)_ 1
     f(0_1_1_1) c_u_con_flow_out(0_1_2)_ 1
     f(0_1_1_1) c_u_con_link_once(0_1_1)_ 1
     f(0_1_1_1) c_u_con_bandwidth(1)_ 4
     f(0_1_1_1) c_u_con_cost_product(0_1_1)_ 5.0000000000000002e-05
     f(0_1_1_1) c_u_con_cost_product_min(0_1_1)_ 5.0000000000000002e-05
     f(0_1_2_0) c_e_con_flow(0_1_1)_ -1
     f(0_1_2_0) c_e_con_flow(0_1_2)_ 1
     f(0_1_2_0) c_u_con_flow_out(0_1_2)_ 1
     f(0_1_2_0) c_u_con_link_once(0_1_2)_ 1
     f(0_1_2_0) c_u_con_bandwidth(2)_ 4
     f(0_1_2_0) c_u_con_cost_product(0_1_2)_ 5.0000000000000002e-05
     f(0_1_2_0) c_u_con_cost_product_min(0_1_2)_ 5.0000000000000002e-05
     f(0_1_2_1) c_e_con_flow(0_1_1)_ 1
     f(0_1_2_1) c_e_con_flow(0_1_2)_ -1
     f(0_1_2_1) c_u_con_flow_in(0_1_2)_ 1
     f(0_1_2_1) c_u_con_link_once(0_1_2)_ 1
     f(0_1_2_1) c_u_con_bandwidth(2)_ 4
     f(0_1_2_1) c_u_con_cost_product(0_1_2)_ 5.0000000000000002e-05
     f(0_1_2_1) c_u_con_cost_product_min(0_1_2)_ 5.0000000000000002e-05
     q(0_1_1) c_u_con_cost_product(0_1_1)_ -1
     q(0_1_1) c_u_con_cost_product_min(0_1_1)_ -1
     q(0_1_2) c_u_con_cost_product(0_1_2)_ -1
     q(0_1_2) c_u_con_cost_product_min(0_1_2)_ -1
RHS
     RHS c_u_con_position_one(0_1)_ 1
     RHS c_u_con_position_one(0_2)_ 1
     RHS c_e_con_position_first(0)_ 0
     RHS c_u_con_position_contiguous(0_1)_ 0
     RHS c_u_con_region_once(0_0)_ 1
     RHS c_u_con_region_once(0_1)_ 1
     RHS c_e_con_stages_total(0)_ 0
     RHS c_u_con_stages_min(0_0)_ 0
     RHS c_u_con_stages_min(0_1)_ 0
     RHS c_u_con_stages_max(0_0)_ 0
     RHS c_u_con_stages_max(0_1)_ 0
     RHS c_u_con_hop_source_le(0_1_0)_ 0
     RHS c_u_con_hop_source_le(0_1_1)_ 0
     RHS c_e_con_hop_source_one(0_1)_ 0
     RHS c_e_con_flow(0_1_0)_ 0
     RHS c_e_con_flow(0_1_1)_ 0
     RHS c_e_con_flow(0_1_2)_ 0
     RHS c_u_con_flow_in(0_1_2)_ 1
     RHS c_u_con_flow_out(0_1_2)_ 1
     RHS c_u_con_link_once(0_1_1)_ 1
     RHS c_u_con_link_once(0_1_2)_ 1
     RHS c_u_con_gpus(0)_ 3
     RHS c_u_con_gpus(1)_ 3
     RHS c_u_con_bandwidth(1)_ 10
     RHS c_u_con_bandwidth(2)_ 10
     RHS c_u_con_cost_product(0_1_1)_ 5.0000000000000002e-05
     RHS c_u_con_cost_product(0_1_2)_ 5.0000000000000002e-05
     RHS c_u_con_cost_product_min(0_1_1)_ 0
     RHS c_u_con_cost_product_min(0_1_2)_ 0
     RHS c_u_con_sym_reverse(0)_ 0
BOUNDS
 BV BOUND x(0)
 BV BOUND a(0_1_0)
 BV BOUND a(0_1_1)
 BV BOUND a(0_2_0)
 BV BOUND a(0_2_1)
 LI BOUND n(0_0_0) 0
 UI BOUND n(0_0_0) 3
 LI BOUND n(0_1_0) 0
 UI BOUND n(0_1_0) 3
 LO BOUND h(0_1_0) 0
 UP BOUND h(0_1_0) 1
 LO BOUND h(0_1_1) 0
 UP BOUND h(0_1_1) 1
 BV BOUND f(0_1_1_0)
 BV BOUND f(0_1_1_1)
 BV BOUND f(0_1_2_0)
 BV BOUND f(0_1_2_1)
 LO BOUND q(0_1_1) 0
 UP BOUND q(0_1_1) 5.0000000000000002e-05
 LO BOUND q(0_1_2) 0
 UP BOUND q(0_1_2) 5.0000000000000002e-05
ENDATA
